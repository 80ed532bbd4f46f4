// SYNCBN001 sync-batchnorm: SyncBatchNorm layers in the step. Each one gathers batch
// statistics from every rank in forward and reduces gradients in backward: two blocking
// collectives per layer per step. See docs/rules/SYNCBN001.md.
#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"
#include "util/text.hpp"

namespace npud {
namespace {

constexpr double kMaxSyncBnPerStep = 20;   // the advisor's max_syncbn_num (per profile; here per step)

// One forward call of a SyncBatchNorm layer: torch's implementation gathers the statistics
// with this op (torch_npu's too); module and autograd events name the class.
bool is_syncbn_forward(std::string_view name) {
  return name == "aten::batch_norm_gather_stats_with_counts" ||
         (icontains(name, "syncbatchnorm") && !icontains(name, "backward"));
}

class SyncBatchNorm final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"SYNCBN001", "sync-batchnorm",
        "many SyncBatchNorm layers per step: two blocking collectives each (cluster training profiles)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    const TraceIndex& index = ctx.index();
    EventGroup g;
    // A layer's forward shows as its module event and as the gather op inside it: count the
    // outermost of the two only.
    for (uint32_t i = 0; i < t.ops.size(); ++i) {
      const Op& op = t.ops[i];
      if (!is_syncbn_forward(t.str(op.name))) continue;
      bool nested = false;
      for (uint32_t p = op.parent; p != kNone && !nested; p = t.ops[p].parent) nested = is_syncbn_forward(t.str(t.ops[p].name));
      if (nested) continue;
      g.add(op.step_index, op.dur_ns);
      if (g.location.op.empty()) g.location = location_of(index, i);
      g.add_example(t.str(op.name));
    }
    if (g.count == 0) return;
    double per_step = index.per_step(g.in_steps, g.in_first_step, g.count);
    if (per_step < kMaxSyncBnPerStep) return;
    g.what = "SyncBatchNorm";
    Finding f = timed_finding(index, id(), g);
    f.severity = Severity::Warning;
    f.location.op = "SyncBatchNorm";
    f.message = fmt::format("{} SyncBatchNorm forward call{}{}, {} in them: each gathers statistics from every "
                            "rank in forward and reduces in backward, two blocking collectives per layer",
                            g.count, g.count == 1 ? "" : "s", per_step_note(index, g), format_duration(g.time_ns));
    f.fix = advice("SYNCBN001", "fix");
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& syncbn001_rule() {
  static const SyncBatchNorm rule;
  return rule;
}

}  // namespace npud
