// `npu-doctor diff BEFORE.json AFTER.json` on two npu-doctor JSON reports (analyze/run
// --format json): which findings the change fixed, which are new and which remain, matched by
// rule id and location (file:line and op), as a trace diff matches them. Reports hold no op
// tables, so this is the findings part of a trace diff only.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace npud {

struct ReportFinding {
  std::string id, severity, message, file, op;
  int64_t line = 0;
};

struct ReportDiff {
  std::string before, after;   // the reports' paths
  std::vector<ReportFinding> fixed, added, remaining;   // remaining: as AFTER says them
};

// The findings of an npu-doctor JSON report; throws InputError naming the file when it is no
// such report.
std::vector<ReportFinding> read_report_findings(const std::string& path);

ReportDiff diff_report_findings(const std::vector<ReportFinding>& before, const std::vector<ReportFinding>& after);

void render_report_diff_text(std::ostream& os, const ReportDiff& d);

}  // namespace npud
