// COMPILE001 op-compile-on-dispatch: ops that torch_npu sends down the aclop path compile
// (or look up a compiled kernel) at dispatch time, inside aclopCompileAndExecute, on the host.
// See docs/rules/COMPILE001.md.
#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/runtime_calls.hpp"

namespace npud {
namespace {

// Ascend's advisor flags 20 calls in the profile; a 47 % share of the step in 11 calls (the
// fixture) is the larger problem, so the share of step time counts too.
constexpr double kMinCallsPerStep = 20;
constexpr double kMinCompileShare = 0.05;

class OpCompileOnDispatch final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"COMPILE001", "op-compile-on-dispatch",
        "host time in aclopCompileAndExecute (ops compiled at dispatch: jit_compile, dynamic shapes; NPU profiles)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const TraceIndex& index = ctx.index();
    RuntimeTotals c = total_runtime_calls(ctx, [](std::string_view n) { return n == "aclopCompileAndExecute"; });
    if (c.count == 0) return;
    double per_step = index.per_step(c.in_steps, c.in_first_step, c.count);
    double s = share(c.time_ns, index.wall_ns());
    if (per_step < kMinCallsPerStep && s < kMinCompileShare) return;
    Finding f = timed_finding(index, id(), c);
    f.severity = s >= kMinCompileShare ? Severity::Warning : Severity::Info;
    std::string rate = per_step_note(index, c);
    std::string ops = ops_text(c, 3);
    f.message = fmt::format("{} aclopCompileAndExecute call{}{} took {} on the host ({} of {} time){}", c.count,
                            c.count == 1 ? "" : "s", rate, format_duration(c.time_ns), format_share(s),
                            index.step_count() ? "step" : "trace", ops.empty() ? "" : ": " + ops);
    f.fix = advice("COMPILE001", "fix");
    f.notes.push_back(advice("COMPILE001", "aclop_note"));
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& compile001_rule() {
  static const OpCompileOnDispatch rule;
  return rule;
}

}  // namespace npud
