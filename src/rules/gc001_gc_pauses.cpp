// GC001 gc-pauses: Python garbage collections inside the profiled steps (torch_npu records them
// as `gc` ranges when the profiler's experimental_config sets gc_detect_threshold). While the
// collector runs, the host queues nothing. See docs/rules/GC001.md.
#include <algorithm>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "model/trace.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

// Ascend's advisor lists collections of 1 ms or more; a profile only holds those longer than
// the user's gc_detect_threshold anyway. Below 1 % of step time in all they are info.
constexpr int64_t kMinPauseNs = 1'000'000;
constexpr double kWarnGcShare = 0.01;

bool is_gc_event(const Trace& t, const Op& op) {
  if (op.kind != OpKind::Other) return false;
  std::string_view n = t.str(op.name);
  return n == "GC" || n == "gc" || n.starts_with("GC ") || n.starts_with("gc ") || n.find("garbage") != n.npos;
}

class GcPauses final : public Rule {
 public:
  std::string_view id() const override { return "GC001"; }
  std::string_view name() const override { return "gc-pauses"; }
  std::string_view summary() const override {
    return "Python garbage collections of 1 ms or more inside the steps (torch_npu profiles with gc_detect_threshold)";
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    const TraceIndex& index = ctx.index();
    EventGroup g;
    int64_t longest = 0;
    for (const Op& op : t.ops) {
      if (!is_gc_event(t, op) || op.dur_ns < kMinPauseNs) continue;
      g.add(op.step, op.dur_ns);
      longest = std::max(longest, op.dur_ns);
    }
    if (g.count == 0) return;
    g.location.op = "gc";
    double s = share(g.time_ns, index.wall_ns());
    Finding f = timed_finding(index, id(), g);
    f.severity = s >= kWarnGcShare ? Severity::Warning : Severity::Info;
    f.message = fmt::format("{} garbage collection{} of 1 ms or more took {} ({} of {} time, longest {})", g.count,
                            g.count == 1 ? "" : "s", format_duration(g.time_ns), format_share(s),
                            index.step_count() ? "step" : "trace", format_duration(longest));
    f.metrics.push_back({"longest_ns", double(longest)});
    f.fix = "Keep the collector out of the step: call gc.freeze() once the model and data pipeline are built (their "
            "objects are never scanned again), raise the thresholds (gc.set_threshold(100000, 50, 100)), or "
            "gc.disable() and gc.collect() every N steps at a point you choose. Objects created per step in large "
            "numbers (Python lists of tensors, dicts of metrics) are what makes collections long.";
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& gc001_rule() {
  static const GcPauses rule;
  return rule;
}

}  // namespace npud
