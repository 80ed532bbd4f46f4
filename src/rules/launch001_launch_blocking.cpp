// LAUNCH001 launch-blocking: the host synchronizes the stream right after most op launches, the
// signature of ASCEND_LAUNCH_BLOCKING=1 (or of a per-op synchronize). Every op then waits for
// the one before it: the task queue never fills. See docs/rules/LAUNCH001.md.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/runtime_calls.hpp"

namespace npud {
namespace {

// The advisor's co-occurrence criterion (Node@launch immediately followed by
// aclrtSynchronizeStream, over half of the launches), on any launch call a profile records.
constexpr double kMinCoOccurrence = 0.5;
constexpr size_t kMinLaunches = 20;

bool is_launch(std::string_view n) {
  return n == "launch" || n == "aclopCompileAndExecute" ||
         (n.starts_with("aclnn") && !n.ends_with("GetWorkspaceSize"));
}

bool is_stream_sync(std::string_view n) { return n.starts_with("aclrtSynchronize"); }

class LaunchBlocking final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"LAUNCH001", "launch-blocking",
        "a stream synchronize right after most op launches (ASCEND_LAUNCH_BLOCKING=1; NPU profiles)",
        Severity::Error};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    // Runtime calls per thread in time order: a launch counts when the next call syncs.
    std::vector<uint32_t> order(t.runtime.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const RuntimeCall &x = t.runtime[a], &y = t.runtime[b];
      if (x.pid != y.pid) return x.pid < y.pid;
      if (x.tid != y.tid) return x.tid < y.tid;
      return x.start_ns < y.start_ns;
    });
    size_t launches = 0, followed = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      const RuntimeCall& call = t.runtime[order[k]];
      if (!is_launch(t.str(call.name))) continue;
      ++launches;
      if (k + 1 < order.size()) {
        const RuntimeCall& next = t.runtime[order[k + 1]];
        if (next.pid == call.pid && next.tid == call.tid && is_stream_sync(t.str(next.name)))
          ++followed;
      }
    }
    if (launches < kMinLaunches) return;
    double ratio = double(followed) / double(launches);
    if (ratio <= kMinCoOccurrence) return;
    RuntimeTotals syncs = total_runtime_calls(ctx, is_stream_sync);
    Finding f = timed_finding(ctx.index(), id(), syncs);
    f.severity = Severity::Error;
    f.message = fmt::format("{} of {} op launches are followed at once by a stream synchronize ({}); the syncs "
                            "took {} ({} of {} time): the ops run one at a time, as with ASCEND_LAUNCH_BLOCKING=1",
                            followed, launches, format_share(ratio), format_duration(syncs.time_ns),
                            format_share(share(syncs.time_ns, ctx.index().wall_ns())),
                            ctx.index().step_count() ? "step" : "trace");
    f.metrics.push_back({"launches", double(launches)});
    f.metrics.push_back({"co_occurrence", ratio});
    f.fix = advice("LAUNCH001", "fix");
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& launch001_rule() {
  static const LaunchBlocking rule;
  return rule;
}

}  // namespace npud
