#include <vector>

#include "analysis/intervals.hpp"
#include "analysis/trace_index.hpp"
#include "report/report.hpp"
#include "util/saturate.hpp"

namespace npud {

ReportSummary summarize(const Trace& trace) {
  ReportSummary s;
  s.source = trace.source;
  s.format = std::string(to_string(trace.format));
  s.ops = trace.ops.size();
  s.kernels = trace.kernels.size();
  s.runtime_calls = trace.runtime.size();
  s.steps = trace.steps.size();
  s.span_ns = trace.span_ns();
  if (!trace.steps.empty()) {
    int64_t total = 0;
    for (const Step& st : trace.steps) add_saturating(total, st.dur_ns);
    s.step_time_ns = total / int64_t(trace.steps.size());
  }
  std::vector<Interval> busy;
  for (const Kernel& k : trace.kernels)
    if (is_busy_task(k)) busy.push_back({k.start_ns, k.start_ns + k.dur_ns});
  if (!busy.empty() && s.span_ns > 0) s.device_busy_share = double(total_length(union_of(std::move(busy)))) / double(s.span_ns);
  if (!trace.kernels.empty()) s.breakdown = mean_breakdown(step_breakdowns(trace));
  return s;
}

}  // namespace npud
