// `npu-doctor rules [ID]`: list the rules, or print one rule's doc.
// `npu-doctor versions`: the torch_npu versions the knowledge base knows.
#include <iostream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "knowledge/knowledge.hpp"
#include "model/rule_filter.hpp"
#include "rules/rule.hpp"
#include "source/source_rules.hpp"
#include "util/embedded.hpp"
#include "util/text.hpp"

namespace npud {
namespace {

// The doc id for a word `rules` was given: every name `rules` lists is taken, an id or a
// profile rule's name (host-device-sync), in any case.
std::string rule_doc_id(std::string_view word) {
  const std::string lower = to_lower(word);
  for (const Rule* r : trace_rules())
    if (to_lower(r->id()) == lower || to_lower(r->name()) == lower) return std::string(r->id());
  std::string upper(word);
  for (char& c : upper)
    if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
  return upper;   // source rules (SYNC101) and docs of no listed rule (PARSE001) go by id
}

}  // namespace

std::string_view rule_doc(std::string_view word) {
  return find_embedded(embedded_rule_docs(), rule_doc_id(word) + ".md");
}

void add_rules_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("rules", "List the rules, or show the documentation of one (`rules SYNC001`)");
  auto id = std::make_shared<std::string>();
  cmd->add_option("ID", *id, "rule id or name as `rules` lists it, any case (SYNC001, sync001, host-device-sync)");
  // Their own footers: the top-level one (inherited otherwise) talks about --fail-on.
  cmd->footer("Exit codes: 0 listed, 2 no such rule.");
  cmd->callback([id, &exit_code] {
    if (id->empty()) {
      std::cout << "Profile and capture rules (analyze, run):\n";
      for (const Rule* r : trace_rules()) std::cout << fmt::format("  {:<12} {:<22} {}\n", r->id(), r->name(), r->summary());
      std::cout << "\nSource rules (scan):\n";
      for (const auto& r : source_rules())
        std::cout << fmt::format("  {:<12} {:<22} {}\n", r.id, r.fixable ? "(fixable)" : "", r.summary);
      exit_code = kExitClean;
      return;
    }
    std::string_view doc = rule_doc(*id);
    if (doc.empty()) {
      std::vector<RuleRef> known = trace_rule_refs();
      for (const RuleRef& r : source_rule_refs()) known.push_back(r);
      std::cerr << fmt::format("npu-doctor: error: no rule '{}'{} (see `npu-doctor rules`)\n", *id, did_you_mean(*id, known));
      exit_code = kExitBadInput;
      return;
    }
    std::cout << doc;
    exit_code = kExitClean;
  });

  auto* versions = app.add_subcommand("versions", "List the torch_npu wheels (and development tips) the knowledge base knows, with their CANN line");
  versions->footer("Exit codes: 0 listed.");
  versions->callback([&exit_code] {
    const Knowledge& kb = Knowledge::builtin();
    std::cout << fmt::format("{:<24}{:<14}{:<10}{:<27}{:<14}{:>5}{:>7}\n", "name (--torch-npu)", "kind", "CANN",
                             "ref", "op-plugin", "aten", "custom");
    for (const auto& v : kb.versions())
      std::cout << fmt::format("{:<24}{:<14}{:<10}{:<27}{:<14}{:>5}{:>7}\n", v.version, v.kind,
                               v.cann.empty() ? "-" : v.cann, v.ref,
                               v.op_plugin_commit.empty() ? "-" : v.op_plugin_commit, v.list().aten.size(),
                               v.list().custom.size());
    std::cout << fmt::format("\nA bare line (2.1.0, 2.1) means the wheel named like it, or <line>-dev when the line "
                             "has no release; default: {}.\n\n{}\n", kb.newest().version, kb.provenance());
    exit_code = kExitClean;
  });
}

}  // namespace npud
