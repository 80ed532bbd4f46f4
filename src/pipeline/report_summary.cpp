#include <vector>

#include <fmt/format.h>

#include "analysis/intervals.hpp"
#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "pipeline/report.hpp"
#include "util/saturate.hpp"

namespace npud {

ReportSummary summarize(const TraceIndex& index) {
  const Trace& trace = index.trace();
  ReportSummary s;
  s.source = trace.source;
  s.format = std::string(to_string(trace.format));
  s.estimated_costs = trace.caps.estimated_costs;
  s.ops = trace.ops.size();
  s.kernels = trace.kernels.size();
  s.runtime_calls = trace.runtime.size();
  s.steps = trace.steps.size();
  s.span_ns = trace.span_ns();
  if (!trace.steps.empty()) {
    // The mean leaves out a start-up step 0 when later steps exist, as per-step rates do
    // (TraceIndex::per_step): it holds the program's start-up, not one iteration.
    size_t first = trace.startup_step_left_out();
    int64_t total = 0;
    for (size_t i = first; i < trace.steps.size(); ++i) add_saturating(total, trace.steps[i].dur_ns);
    s.step_time_ns = total / int64_t(trace.steps.size() - first);
  }
  const std::vector<Interval>& busy = index.all_busy();
  if (!busy.empty() && s.span_ns > 0) s.device_busy_share = double(total_length(busy)) / double(s.span_ns);
  if (!trace.kernels.empty()) s.breakdown = mean_breakdown(step_breakdowns(trace));
  return s;
}

}  // namespace npud
