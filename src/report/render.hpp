// The renderers of a Report (pipeline/report.hpp): text, JSON (and its amp-check and metric
// sections), and what the text and HTML reports both show first.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/report.hpp"

namespace npud {

// The mean device time per step (or over the trace without steps): computing, communication,
// free. The text report's last lines and the HTML summary say it in these words.
std::string device_time_line(const StepBreakdown& b, size_t steps);

struct TextOptions {
  bool color = false;
  bool verbose = false;          // all notes and every finding of a rule (default: top 5 per rule)
  bool host_ranking = false;     // show HOT001's host-op timings (always with verbose)
  // Columns the top-problem lines are cut to: the terminal's when the report goes to stdout
  // (util/terminal.hpp), else kDefaultTextWidth.
  static constexpr size_t kDefaultTextWidth = 127;
  size_t width = kDefaultTextWidth;
};
void render_text(std::ostream& os, const Report& report, const TextOptions& opts);
// One JSON object; schema in docs/json-schema.md (kJsonSchemaVersion).
void render_json(std::ostream& os, const Report& report);
inline constexpr int kJsonSchemaVersion = 1;

// The amp-check sections (src/report/amp_report.cpp): drift start and tables, keep-in-fp32
// list, loss-scale advice. The text and JSON reports call them when Report::amp is set.
void render_amp_text(std::ostream& os, const AmpSummary& amp, bool color);
class JsonWriter;
void write_amp_json(JsonWriter& w, const AmpSummary& amp);
// The metrics of docs/metrics.md as one JSON object (cos null when there is no finite pair).
// compare_fields: also norm_ratio and nonfinite_mismatch (compare computes them; amp-check does not).
void write_metrics_json(JsonWriter& w, const TensorMetrics& m, bool compare_fields = false);

// "N findings (E errors, W warnings, I info) in <source>"
std::string summary_line(const Report& report);

// HOT001 ranks where this machine's CPU (or the traced device) spent its time: a ranking, not
// time lost, and on a capture not an NPU cost. Reports show it apart, never as a top problem.
inline constexpr std::string_view kHostRankingRule = "HOT001";
// The findings a report's first screen lists, what to fix first: a capture that stopped early,
// then errors with no time estimate (code that fails on an NPU), then the most estimated time
// lost (cost_ns), severity breaking ties; at most kTopProblems, never HOT001 (text and HTML
// reports alike; src/report/top_problems.cpp).
inline constexpr size_t kTopProblems = 5;
std::vector<const Finding*> top_problems(const std::vector<Finding>& findings);

}  // namespace npud
