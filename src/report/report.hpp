// Renders findings. Every subcommand builds one Report and hands it to the renderer
// the user chose with --format.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/amp.hpp"
#include "analysis/step_breakdown.hpp"
#include "model/trace.hpp"
#include "model/finding.hpp"

namespace npud {

struct ReportSummary {
  std::string source;            // input path
  std::string format;            // input format name
  bool estimated_costs = false;  // its times are the recording machine's (Trace::caps): reports say so
  std::string torch_npu;         // knowledge-base version used
  std::string knowledge_note;    // provenance caveat of the op lists
  size_t ops = 0, kernels = 0, runtime_calls = 0, steps = 0;
  int64_t span_ns = 0;
  int64_t step_time_ns = 0;      // mean step duration, 0 if no steps
  double device_busy_share = -1; // kernels' union time / span, -1 if no device events
  // Mean device time per step: computing, communication, overlap, free (docs/json-schema.md);
  // unset without device events.
  std::optional<StepBreakdown> breakdown;
};

struct Report {
  std::string command;           // "analyze", "run", ...
  ReportSummary summary;
  std::vector<Finding> findings; // sorted worst first
  std::vector<Warning> warnings; // from importers
  std::vector<std::string> rules_run;  // ids of the rules that ran (empty = not recorded)
  std::optional<AmpSummary> amp; // amp-check captures: drift, keep-in-fp32, loss scale (docs/amp-check.md)
  std::vector<std::string> notes; // about the run itself (other processes' captures): text says them first
  std::string config_file;       // the configuration file used, "" none (text says it first)
  size_t suppressed = 0;         // findings silenced by comments or per-file-ignores
  size_t baselined = 0;          // findings left out because --baseline holds them
};

ReportSummary summarize(const Trace& trace);
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
