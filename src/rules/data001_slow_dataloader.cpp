// DATA001 slow-dataloader: time the training loop waits for the next batch
// (`enumerate(DataLoader)#...__next__` ranges of torch.profiler and torch_npu profiles), while
// the device has nothing queued. See docs/rules/DATA001.md.
#include <algorithm>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"
#include "util/saturate.hpp"

namespace npud {
namespace {

// Ascend's advisor flags any one wait of 10 ms or more; a loader that costs 8 ms of every 40 ms
// step never trips that. Both count here: the share of step time, and a single long wait.
constexpr double kMinWaitShare = 0.05;
constexpr int64_t kLongWaitNs = 10'000'000;

bool is_dataloader_wait(std::string_view name) {
  return name.find("DataLoader") != std::string_view::npos && name.find("__next__") != std::string_view::npos;
}

class SlowDataLoader final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"DATA001", "slow-dataloader",
        "time the step waits for the DataLoader's next batch (profiles with record_function ranges)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    const TraceIndex& index = ctx.index();
    EventGroup g;
    int64_t longest = 0;
    bool single_process = false;
    for (uint32_t i = 0; i < t.ops.size(); ++i) {
      const Op& op = t.ops[i];
      std::string_view name = t.str(op.name);
      if (!is_dataloader_wait(name)) continue;
      if (op.parent != kNone && is_dataloader_wait(t.str(t.ops[op.parent].name))) continue;   // counted once
      if (g.count == 0) {
        g.what = std::string(name);
        g.location = location_of(index, i);
      }
      g.add(op.step_index, op.dur_ns);
      longest = std::max(longest, op.dur_ns);
      single_process = single_process || name.find("SingleProcess") != std::string_view::npos;
    }
    if (g.count == 0) return;
    double s = share(g.time_ns, index.wall_ns());
    if (s < kMinWaitShare && longest < kLongWaitNs) return;
    Finding f = timed_finding(index, id(), g);
    f.severity = Severity::Warning;
    f.message = fmt::format("waiting for the next batch took {} in {} call{} ({} of {} time, longest {})",
                            format_duration(g.time_ns), g.count, g.count == 1 ? "" : "s", format_share(s),
                            index.step_count() ? "step" : "trace", format_duration(longest));
    f.metrics.push_back({"longest_ns", double(longest)});
    f.fix = advice("DATA001", single_process ? "fix_no_workers" : "fix");
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& data001_rule() {
  static const SlowDataLoader rule;
  return rule;
}

}  // namespace npud
