// What one analysis found, for the renderers (report/render.hpp) to show: every command that
// reads a trace builds one Report (pipeline/pipeline.hpp) and hands it to the renderer the user
// chose with --format.
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

// The counts, span, mean step and device time of the index's trace, the report's summary: the
// busy share is the index's union of busy device time (the rules' denominator too).
class TraceIndex;
ReportSummary summarize(const TraceIndex& index);
}  // namespace npud
