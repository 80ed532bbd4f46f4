// `npu-doctor docs [TOPIC]`: prints the user docs that reports and --help cite, compiled into
// the binary (a wheel install has no docs/ folder): `npu-doctor docs configuration` is what
// the source tree has as docs/configuration.md. Rule docs too (`docs SYNC001` = `rules SYNC001`,
// also by name: `docs host-device-sync`).
#include <unistd.h>

#include <iostream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "util/embedded.hpp"
#include "util/terminal.hpp"
#include "util/text.hpp"

namespace npud {
namespace {

// "docs/formats/dump.md", "formats/dump.md", "formats/dump" -> "formats/dump.md".
std::string topic_file(std::string_view word) {
  std::string w(trim(word));
  if (w.starts_with("docs/")) w.erase(0, 5);
  if (!w.ends_with(".md")) w += ".md";
  return w;
}

// The doc's title: its first "# " heading, else "".
std::string_view title_of(std::string_view doc) {
  for (size_t start = 0; start < doc.size();) {
    size_t end = doc.find('\n', start);
    if (end == std::string_view::npos) end = doc.size();
    std::string_view line = doc.substr(start, end - start);
    if (line.starts_with("# ")) return trim(line.substr(2));
    start = end + 1;
  }
  return {};
}

// One line a topic, its title cut to the terminal's width.
void list_topics(std::ostream& os) {
  const size_t width = terminal_width(STDOUT_FILENO, 80);
  os << "Topics (`npu-doctor docs TOPIC`; the source tree's docs/TOPIC.md):\n";
  for (const EmbeddedFile& f : embedded_topic_docs()) {
    std::string name = fmt::format("  {:<18} ", f.name.substr(0, f.name.size() - 3));
    os << name << cut_to_width(title_of(f.bytes), width > name.size() + 20 ? width - name.size() : 20) << '\n';
  }
  os << fmt::format("  {:<18} ", "example")
     << "the bundled example program (docs example > train.py)\n";
  os << "\nRule docs: `npu-doctor rules ID` (or `npu-doctor docs ID`).\n";
}

}  // namespace

std::string_view find_topic_doc(std::string_view topic) {
  std::string_view doc = find_embedded(embedded_topic_docs(), topic_file(topic));
  if (doc.empty()) {   // a rule, as `rules` takes it (also as rules/ID, its path under docs/)
    std::string_view word = trim(topic);
    if (word.starts_with("docs/")) word.remove_prefix(5);
    if (word.starts_with("rules/")) word.remove_prefix(6);
    if (word.ends_with(".md")) word.remove_suffix(3);
    doc = rule_doc(word);
  }
  return doc;
}

void add_docs_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("docs", "Print a user doc (configuration, capture, json-schema, ...; all of them "
                                         "without TOPIC): what reports and --help cite as `npu-doctor docs TOPIC`; "
                                         "`docs example` prints the bundled example program");
  auto topic = std::make_shared<std::string>();
  cmd->add_option("TOPIC", *topic, "a topic as listed (configuration, formats/dump, ...) or a rule id (SYNC001)");
  cmd->footer("Exit codes: 0 printed, 2 no such topic.");
  cmd->callback([topic, &exit_code] {
    if (topic->empty()) {
      list_topics(std::cout);
      exit_code = kExitClean;
      return;
    }
    std::string_view doc = trim(*topic) == "example" ? find_embedded(embedded_examples(), "tiny_gpt/train.py")
                                                     : find_topic_doc(*topic);
    if (doc.empty()) {
      std::cerr << fmt::format("npu-doctor: error: no doc '{}' (`npu-doctor docs` lists the topics)\n", *topic);
      exit_code = kExitBadInput;
      return;
    }
    std::cout << doc;
    exit_code = kExitClean;
  });
}

}  // namespace npud
