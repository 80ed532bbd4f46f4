// One suppression syntax for every command (scan, analyze, run, amp-check), docs/configuration.md:
//   x = loss.item()   # npu-doctor: ignore[SYNC001,SYNC101]   this line, these rules
//   x = loss.item()   # npu-doctor: ignore                    this line, every rule
//   x = loss.item()   # noqa: SYNC001                         this line, these rules (ruff's form)
//   # npu-doctor: ignore-file[CUDA002]                        anywhere in the file: the whole file
// and per-file-ignores from the configuration (cli/config.hpp). A bare `# noqa` silences
// nothing here: it is written for flake8/ruff about their own codes, and taking it as "every
// npu-doctor rule too" would hide NPU problems nobody looked at (ruff makes the same choice
// for codes it does not know). Ids match exactly, any case.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "source/source_snippet.hpp"
#include "model/finding.hpp"

namespace npud {

struct SuppressionComment {
  bool file_level = false;          // ignore-file
  std::vector<std::string> ids;     // upper case; empty = every rule
};

// The directives in one source line's comments (the text after each '#'). A '#' inside a
// string literal is not told apart: a directive there is rare, and the scanner, which parses
// the file, only passes real comments.
std::vector<SuppressionComment> parse_suppressions(std::string_view line);
bool suppresses(const SuppressionComment& c, std::string_view rule);

// A file's suppressions: line -> directives, plus the file-level ones.
struct FileSuppressions {
  std::unordered_map<int, std::vector<SuppressionComment>> by_line;
  std::vector<SuppressionComment> whole_file;
  bool suppressed(std::string_view rule, int line) const;
};
FileSuppressions file_suppressions(const std::vector<std::string>& lines);

// A rule glob list (per-file-ignores) of the configuration.
struct PathIgnore {
  std::string glob;                 // relative to `base`; without '/': any file of that name
  std::vector<std::string> ids;     // rule ids or prefixes, upper case
};
struct PathIgnores {
  std::string base;                 // the configuration file's folder
  std::vector<PathIgnore> rules;
  bool ignores(std::string_view file, std::string_view rule) const;
};

// The suppression step of analyze/run/amp-check: drops the findings whose file:line (read
// under `policy`, as snippets are) or whose file's path says so. Returns how many it dropped.
size_t suppress_findings(std::vector<Finding>& findings, const SnippetPolicy& policy, const PathIgnores& paths);

}  // namespace npud
