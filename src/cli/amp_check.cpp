// `npu-doctor amp-check [options] -- PROGRAM ARGS...`: runs the program once with the shim in
// amp mode (shadow execution: every op in low precision next to an fp32 shadow, see
// docs/formats/amp.md), then reports where precision drift starts, which ops to keep in
// fp32 and how to scale the loss (the AMP rules). Launching is shared with `run`
// (cli/launch.hpp). See docs/amp-check.md.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/amp_check.hpp"
#include "cli/analyze.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/inputs.hpp"
#include "cli/launch.hpp"
#include "knowledge/knowledge.hpp"
#include "util/atomic_file.hpp"

namespace npud {

namespace fs = std::filesystem;

// The autocast policy of the knowledge base as the shim's list file names it (or "" to skip:
// "banned" ops raise under autocast, the shim leaves them alone).
std::string_view amp_list_policy(std::string_view knowledge_policy) {
  if (knowledge_policy == "lower_precision_fp") return "lower";
  if (knowledge_policy.starts_with("fp32")) return "fp32";
  if (knowledge_policy == "promote") return "promote";
  return {};
}

// NPUD_AMP_LISTS: "aten::<op>\t<policy>" per line, sorted, for the knowledge version (or the
// oldest version that has autocast lists when it has none).
std::string amp_lists_text(const KnowledgeVersion& v) {
  std::vector<std::pair<std::string, std::string_view>> rows;
  for (const auto& [op, policy] : v.autocast())
    if (auto p = amp_list_policy(policy); !p.empty()) rows.emplace_back("aten::" + op, p);
  std::sort(rows.begin(), rows.end());
  std::string out;
  for (const auto& [op, p] : rows) out += fmt::format("{}\t{}\n", op, p);
  return out;
}

namespace {

struct AmpCheckOptions {
  std::string dtype = "fp16";
  std::string level = "O1";
  std::string emulate = "auto";
  LaunchRequest launch;
};

const KnowledgeVersion* version_with_lists(const KnowledgeVersion& chosen, bool quiet) {
  if (!chosen.autocast().empty()) return &chosen;
  for (const KnowledgeVersion& v : Knowledge::builtin().versions())
    if (!v.autocast().empty()) {
      if (!quiet)
        std::cerr << fmt::format("npu-doctor: torch_npu {} has no autocast lists in the knowledge base; the shim "
                                 "follows torch_npu {}'s\n", chosen.version, v.version);
      return &v;
    }
  return &chosen;
}

int amp_check_command(const AmpCheckOptions& o, AnalyzeOptions ao) {
  LaunchRequest req = o.launch;
  req.command_name = "amp-check";
  if (int code = check_launch_outputs(req, ao); code >= 0) return code;
  const KnowledgeVersion* version = torch_npu_version_or_report(ao.torch_npu);
  if (!version) return kExitBadInput;
  const KnowledgeVersion* lists = version_with_lists(*version, ao.quiet);

  std::error_code ec;
  fs::create_directories(o.launch.out_dir, ec);   // the lists file goes there before the launch
  if (ec) {
    std::cerr << fmt::format("npu-doctor: error: cannot create {}: {}\n", o.launch.out_dir, ec.message());
    return kExitBadInput;
  }
  fs::path lists_file = fs::path(o.launch.out_dir) / "amp_lists.tsv";
  std::string lists_path = fs::absolute(lists_file, ec).string();  // the working directory gone: ec, no throw
  if (ec) lists_path = lists_file.string();
  try {
    AtomicFile f(lists_path);
    f.stream() << amp_lists_text(*lists);
    f.commit();
  } catch (const std::exception& e) {
    std::cerr << fmt::format("npu-doctor: error: cannot write {}: {}\n", lists_path, e.what());
    return kExitBadInput;
  }

  req.extra_env = {"NPUD_AMP=" + o.dtype, "NPUD_AMP_LEVEL=" + o.level, "NPUD_AMP_LISTS=" + lists_path,
                   // the header's amp.lists: where the lists came from
                   fmt::format("NPUD_AMP_LISTS_NAME=knowledge-base NPU autocast lists (torch_npu {})", lists->version)};
  // auto: left unset, the shim emulates when the program runs on the CPU (docs/amp-check.md)
  if (o.emulate != "auto") req.extra_env.push_back(std::string("NPUD_AMP_EMULATE=") + (o.emulate == "on" ? "1" : "0"));
  if (ao.select.empty()) ao.select = {"AMP"};   // the other rule families only when asked (--select)
  return launch_and_analyze(std::move(req), std::move(ao));
}

}  // namespace

void add_amp_check_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "amp-check", "Run a PyTorch program once in low precision next to an fp32 shadow and report where precision "
                   "drift starts, which ops to keep in fp32 and how to scale the loss: "
                   "npu-doctor amp-check [OPTIONS] -- python3 train.py ARGS...");
  auto o = std::make_shared<AmpCheckOptions>();
  auto ao = std::make_shared<AnalyzeOptions>();
  add_launch_options(*cmd, o->launch, *ao, "directory for the capture and the autocast list file");
  cmd->add_option("--dtype", o->dtype, "low-precision dtype")
      ->check(CLI::IsMember({"fp16", "bf16"}))
      ->capture_default_str();
  cmd->add_option("--level", o->level, "O1: the NPU autocast lists decide per op; O2: every float op in low precision")
      ->check(CLI::IsMember({"O1", "O2"}))
      ->capture_default_str();
  cmd->add_option("--emulate", o->emulate,
                  "on: emulate low precision on CPU (round inputs/outputs, fp32 compute); off: real autocast on the "
                  "device; auto: emulate when the program runs on the CPU")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd->footer(
      "Only the AMP rules run unless --select names others. The program itself runs in low precision from the first "
      "recorded step on (emulated on the CPU, autocast on a device): its losses and outputs differ from an fp32 run, "
      "the fp32 side is only the shadow; every report says so first. Its output passes through and signals are "
      "forwarded. Exit codes: the program's own status when it failed, otherwise 0 no finding at "
      "or above --fail-on, 1 findings at or above --fail-on, 2 bad input, usage, or no capture.");
  cmd->callback([cmd, o, ao, &exit_code] {
    // amp-check keeps its own default rules (AMP) unless --select is given: a configuration's
    // select is written for scan and analyze.
    exit_code = apply_config_or_report(*cmd, ".", *ao, false) ? amp_check_command(*o, *ao) : kExitBadInput;
  });
}

}  // namespace npud
