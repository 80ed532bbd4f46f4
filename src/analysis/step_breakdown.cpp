#include "analysis/step_breakdown.hpp"

#include <algorithm>

#include "analysis/intervals.hpp"
#include "analysis/trace_index.hpp"

namespace npud {

std::vector<StepBreakdown> step_breakdowns(const Trace& t) {
  struct Busy {
    std::vector<Interval> compute, comm;
  };
  const bool stepped = !t.steps.empty();
  std::vector<Busy> busy(stepped ? t.steps.size() : 1);
  for (const Kernel& k : t.kernels) {
    if (!is_busy_task(k)) continue;
    if (stepped && (k.step_index < 0 || size_t(k.step_index) >= busy.size())) continue;
    Busy& b = busy[stepped ? size_t(k.step_index) : 0];
    (k.kind == TaskKind::Communication ? b.comm : b.compute).push_back({k.start_ns, k.start_ns + k.dur_ns});
  }
  std::vector<StepBreakdown> out;
  for (size_t i = 0; i < busy.size(); ++i) {
    StepBreakdown b;
    b.number = stepped ? t.steps[i].number : -1;
    b.step_ns = stepped ? t.steps[i].dur_ns : t.span_ns();
    std::vector<Interval> all = busy[i].compute;
    all.insert(all.end(), busy[i].comm.begin(), busy[i].comm.end());
    b.computing_ns = total_length(union_of(std::move(busy[i].compute)));
    b.communication_ns = total_length(union_of(std::move(busy[i].comm)));
    int64_t either = total_length(union_of(std::move(all)));
    b.overlapped_ns = b.computing_ns + b.communication_ns - either;
    b.free_ns = std::max<int64_t>(0, b.step_ns - either);
    out.push_back(b);
  }
  return out;
}

StepBreakdown step_from_step_trace(const StepTraceTime& row) {
  StepBreakdown b;
  b.number = row.step_number;
  b.computing_ns = row.computing_ns;
  b.communication_ns = row.comm_not_overlapped_ns + row.overlapped_ns;
  b.overlapped_ns = row.overlapped_ns;
  b.free_ns = row.free_ns;
  b.step_ns = row.computing_ns + row.comm_not_overlapped_ns + row.free_ns;
  b.stage_ns = row.stage_ns;
  b.bubble_ns = row.bubble_ns;
  return b;
}

StepBreakdown mean_breakdown(const std::vector<StepBreakdown>& steps) {
  StepBreakdown m;
  if (steps.empty()) return m;
  for (const StepBreakdown& b : steps) {
    m.step_ns += b.step_ns;
    m.computing_ns += b.computing_ns;
    m.communication_ns += b.communication_ns;
    m.overlapped_ns += b.overlapped_ns;
    m.free_ns += b.free_ns;
  }
  int64_t n = int64_t(steps.size());
  m.step_ns /= n, m.computing_ns /= n, m.communication_ns /= n, m.overlapped_ns /= n, m.free_ns /= n;
  return m;
}

}  // namespace npud
