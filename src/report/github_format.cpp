// `--format github`: one GitHub Actions workflow command per result, as ruff writes them, so a
// workflow step shows the findings as annotations on the pull request without code scanning:
//   ::warning file=src/train.py,line=12,col=5,title=SYNC001::loss.item() in the loop: ...
// The escaping is GitHub's (toolkit's command.ts): '%', CR and LF in the message; also ':' and
// ',' in a property value, where they would end the value.
#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "report/sarif.hpp"

namespace npud {
namespace {

std::string escape_data(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string escape_property(std::string_view s) {
  std::string out;
  for (char c : escape_data(s)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

// SARIF's levels but for info: GitHub's command is `notice` where SARIF says `note`.
std::string_view command_name(Severity s) { return s == Severity::Info ? "notice" : sarif_level(s); }

}  // namespace

void render_github(std::ostream& os, const SarifLog& log) {
  for (const SarifResult& r : log.results) {
    // A finding without a line is put at line 1 of its input, as in SARIF.
    std::string props = fmt::format("file={},line={}", escape_property(project_relative_path(r.uri, log.paths)),
                                    std::max(r.line, 1));
    if (r.line > 0 && r.column > 0) props += fmt::format(",col={}", r.column);
    if (r.line > 0 && r.end_line > 0) props += fmt::format(",endLine={}", r.end_line);
    if (r.line > 0 && r.end_column > 0) props += fmt::format(",endColumn={}", r.end_column);
    os << fmt::format("::{} {},title={}::{}\n", command_name(r.severity), props, escape_property(r.rule_id),
                      escape_data(r.text()));
  }
}

}  // namespace npud
