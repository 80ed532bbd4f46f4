// SARIF 2.1.0 output (for GitHub code scanning and other SARIF viewers): one run, the rules
// that can report (tool.driver.rules) and the results, and, where a finding has an exact fix,
// SARIF `fixes` (byte-offset replacements). The same results as GitHub Actions workflow
// commands (`--format github`, github_format.cpp) for repositories without code scanning.
//
// GitHub rejects a whole upload for one result without an artifact location, and shows only
// files under the repository: so every result has a physical location, its file said relative
// to the project root (%SRCROOT%), never as an absolute or file:// URI. A finding without a
// source line (an op of a profile) is put at line 1 of the input it came from. Each result
// carries partialFingerprints that survive line moves and reruns (sarif_fingerprint).
#pragma once

#include <cstddef>
#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "model/finding.hpp"
#include "pipeline/report.hpp"
#include "source/source_snippet.hpp"

namespace npud {

struct SarifRule {
  std::string id;
  std::string short_description;
  std::string help_text;         // optional (markdown doc)
  Severity default_severity = Severity::Warning;
};

struct SarifReplacement {
  size_t byte_offset = 0;
  size_t byte_length = 0;
  std::string inserted;
};

struct SarifResult {
  std::string rule_id;
  Severity severity = Severity::Warning;
  std::string message;
  // The finding's file, else the input it was found in: a path as the user, the trace or the
  // report gave it (relative ones are relative to the working directory).
  std::string uri;
  int line = 0, column = 0, end_line = 0, end_column = 0;  // 1-based; 0 = unknown (line 0: line 1)
  std::string fix_description;   // with replacements: a SARIF fix
  std::vector<SarifReplacement> replacements;
  std::string logical_location;  // op / module name, when the finding has one
  // The stripped text of the source line when the file could be read: the fingerprint holds it
  // instead of the line number ("": the logical location stands in).
  std::string line_text;

  // The message, or the rule id for a result without one: GitHub refuses an empty message.
  std::string_view text() const { return message.empty() ? rule_id : message; }
};

// The folders a log's paths are said against: artifact URIs are relative to the project root
// (%SRCROOT%); the relative paths of findings are relative to the working directory.
struct SarifPaths {
  std::filesystem::path project_root;   // absolute, normal, no trailing '/'
  std::filesystem::path working_dir;    // absolute
};

struct SarifLog {
  std::string tool_name = "npu-doctor";
  std::string tool_version;
  std::string information_uri;
  std::vector<SarifRule> rules;
  std::vector<SarifResult> results;
  SarifPaths paths;
};

// "error" / "warning" / "note".
std::string_view sarif_level(Severity s);

// The nearest folder at or above `dir` that holds a `.git` (a folder, or a worktree's file),
// else `dir`: the default --project-root.
std::filesystem::path find_project_root(const std::filesystem::path& dir);
// The paths of a log written from the working directory; `project_root` as --project-root gave
// it ("" = find_project_root of the working directory).
SarifPaths sarif_paths(const std::string& project_root);
// `path` relative to the project root, '/'-separated, with "../" segments where it lies outside:
// never absolute (lexical: symlinks are not resolved; '\' of a Windows trace is taken as '/').
std::string project_relative_path(std::string_view path, const SarifPaths& paths);
// A relative path as a URI reference: every byte but unreserved ones and '/' percent-encoded.
std::string sarif_uri(std::string_view relative_path);
// The stable part of a result's partialFingerprints["npuDoctor/v1"] (the renderer appends
// ":N", the occurrence among results alike): a hex hash of the rule, the project-relative file
// and the source line's text, else the logical location. No line number, count or time.
std::string sarif_fingerprint(std::string_view rule, std::string_view relative_file, const SarifResult& r);

void render_sarif(std::ostream& os, const SarifLog& log);
// One GitHub Actions workflow command per result (github_format.cpp).
void render_github(std::ostream& os, const SarifLog& log);
// `format` "sarif" or "github": the log in that format.
void render_code_scanning(std::ostream& os, std::string_view format, const SarifLog& log);

// A rule for tool.driver.rules, its doc (markdown, compiled in) as `help`. No helpUri: a file://
// URI into the installation would mean nothing where the log is read.
SarifRule sarif_rule(std::string_view id, std::string_view summary, Severity severity);

// A trace finding as a result: at its file and line, else at `input` (the profile or capture it
// was found in). `lines` reads the source line for the fingerprint.
SarifResult sarif_result(const Finding& f, const std::string& input, SourceLineCache& lines);
// The log of trace-rule results, with the rules they name (each once, its first severity).
SarifLog sarif_log(std::vector<SarifResult> results, SarifPaths paths);
// The findings of a Report; `policy`: the folders its source lines may be read from.
SarifLog sarif_from_report(const Report& report, const SnippetPolicy& policy, SarifPaths paths);

}  // namespace npud
