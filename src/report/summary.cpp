#include <vector>

#include <fmt/format.h>

#include "analysis/intervals.hpp"
#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "report/report.hpp"
#include "util/saturate.hpp"

namespace npud {

ReportSummary summarize(const Trace& trace) {
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
  std::vector<Interval> busy;
  for (const Kernel& k : trace.kernels)
    if (is_busy_task(k)) busy.push_back({k.start_ns, k.start_ns + k.dur_ns});
  if (!busy.empty() && s.span_ns > 0) s.device_busy_share = double(total_length(union_of(std::move(busy)))) / double(s.span_ns);
  if (!trace.kernels.empty()) s.breakdown = mean_breakdown(step_breakdowns(trace));
  return s;
}

std::string device_time_line(const StepBreakdown& b, size_t steps) {
  auto part = [&](int64_t ns) { return fmt::format("{} ({})", format_duration(ns), format_share(double(ns) / double(b.step_ns))); };
  std::string comm = b.communication_ns ? fmt::format(", communication {} (overlapped with computing {})",
                                                      part(b.communication_ns), format_duration(b.overlapped_ns))
                                        : "";
  // "free" is the whole step's time with no device task; IDLE001's "idle" is another measure
  // (gaps >= --min-gap-us between a device's first and last task, summed over the steps): each
  // says what it counts, so the two numbers do not read as one quantity (issue 30 §4).
  std::string free = fmt::format("{} ({}: no device task running, gaps of any length; IDLE001 counts the long gaps)",
                                 format_duration(b.free_ns), format_share(double(b.free_ns) / double(b.step_ns)));
  return fmt::format("device time per {}: computing {}{}, free {}",
                     steps ? fmt::format("step of {} (mean of {} steps)", format_duration(b.step_ns), steps) : "trace",
                     part(b.computing_ns), comm, free);
}

}  // namespace npud
