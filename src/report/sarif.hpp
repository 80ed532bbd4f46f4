// SARIF 2.1.0 output (for GitHub code scanning and other SARIF viewers): one run, the rules
// that can report (tool.driver.rules) and the results with physical locations and, where a
// finding has an exact fix, SARIF `fixes` (byte-offset replacements).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "report/report.hpp"
#include "model/finding.hpp"

namespace npud {

struct SarifRule {
  std::string id;
  std::string short_description;
  std::string help_uri;          // optional
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
  std::string uri;               // file path as the user gave it; made a relative URI
  int line = 0, column = 0, end_line = 0, end_column = 0;  // 1-based; 0 = unknown
  std::string fix_description;   // with replacements: a SARIF fix
  std::vector<SarifReplacement> replacements;
  std::string logical_location;  // op / module name when there is no file
};

struct SarifLog {
  std::string tool_name = "npu-doctor";
  std::string tool_version;
  std::string information_uri;
  std::vector<SarifRule> rules;
  std::vector<SarifResult> results;
};

// "error" / "warning" / "note".
std::string_view sarif_level(Severity s);
// A path as a SARIF artifact URI: forward slashes, percent-encoded; relative paths stay
// relative (resolved against %SRCROOT%), absolute ones become file:// URIs.
std::string sarif_uri(std::string_view path);

void render_sarif(std::ostream& os, const SarifLog& log);

// A rule for tool.driver.rules: its doc (markdown, compiled in) as `help`, and as `helpUri`
// the file:// URI of the doc installed with the binary (omitted when none is found).
SarifRule sarif_rule(std::string_view id, std::string_view summary, Severity severity);

// Trace-based findings as SARIF results (rules taken from the findings).
SarifLog sarif_from_findings(const std::vector<Finding>& findings);
// The findings of a Report, as above.
SarifLog sarif_from_report(const Report& report);

}  // namespace npud
