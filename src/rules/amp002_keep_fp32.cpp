// AMP002 amp-keep-fp32: ops that overflow, underflow or lose accuracy on their own when run
// in low precision (local metrics), one finding per op name, saying whether the NPU
// autocast list of the chosen torch_npu already keeps them in fp32. See docs/rules/AMP002.md.
#include <fmt/format.h>

#include "analysis/amp.hpp"
#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "knowledge/knowledge.hpp"
#include "rules/amp_rules.hpp"
#include "rules/amp_support.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

std::string policy_note(const KeepFp32& k, const AmpHeader& h, std::string_view version) {
  const std::string& p = k.policy;
  if (p.starts_with("fp32"))
    return advice("AMP002", "policy_fp32_note",
                  {{"torch_npu", version},
                   {"op", k.op},
                   {"policy", p},
                   {"dtype", short_dtype(h.dtype)},
                   {"because", advice("AMP002", h.level == "O2" ? "because_o2" : "because_cast")}});
  if (p == "lower_precision_fp")
    return advice("AMP002", "policy_lower_note", {{"torch_npu", version}, {"op", k.op}, {"dtype", short_dtype(h.dtype)}});
  if (p == "promote") return advice("AMP002", "policy_promote_note", {{"torch_npu", version}, {"op", k.op}});
  return advice("AMP002", "policy_none_note", {{"op", k.op}, {"torch_npu", version}, {"dtype", short_dtype(h.dtype)}});
}

class KeepFp32Rule final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"AMP002", "amp-keep-fp32",
        "ops that overflow, underflow or lose accuracy in low precision: keep them in fp32 (amp-check captures)",
        Severity::Error};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (t.numerics.empty()) return;
    AmpHeader h = amp_header(t);
    for (const KeepFp32& k : keep_in_fp32(t, ctx.npu)) {
      Finding f;
      f.rule = "AMP002";
      f.severity = k.reason == "overflow" ? Severity::Error : Severity::Warning;
      f.location = location_of(ctx.index(), k.first_op);
      if (f.location.module.empty()) f.location.module = amp_place(t, k.first_op).module;
      std::string what = k.reason == "overflow"    ? fmt::format("overflows ({} elements beyond 65504 or new Inf/NaN)", k.overflow)
                         : k.reason == "underflow" ? fmt::format("underflows ({} nonzero elements become 0)", k.underflow)
                                                   : fmt::format("loses accuracy (cos down to {}, up to {:.1f}% of "
                                                                 "elements beyond 5e-3)", cos_text(k.worst_cos),
                                                                 100 * k.worst_gt_5e3);
      f.message = fmt::format("{} {} in {} in {} of {} low-precision calls (first at {}): keep it in fp32", k.op, what,
                              short_dtype(h.dtype), k.bad_calls, k.calls, where(f.location));
      f.metrics = {{"calls", double(k.calls)},         {"bad_calls", double(k.bad_calls)},
                   {"overflow", double(k.overflow)},   {"underflow", double(k.underflow)},
                   {"worst_cos", k.worst_cos},         {"worst_gt_5e3", k.worst_gt_5e3},
                   {"npu_autocast_fp32", k.policy.starts_with("fp32") ? 1.0 : 0.0}};
      f.fix = advice("AMP002", "fix", {{"base", aten_base(k.op)}, {"where", where(f.location)}});
      if (ctx.npu.autocast().empty())
        f.notes.push_back(advice("AMP002", "no_autocast_list_note", {{"torch_npu", ctx.npu.version}, {"op", k.op}}));
      else
        f.notes.push_back(policy_note(k, h, ctx.npu.version));
      if (k.reason == "overflow") f.notes.push_back(advice("AMP", "overflow_mode_note"));
      if (std::string m = measurement_note(h); !m.empty()) f.notes.push_back(m);
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& amp002_rule() {
  static const KeepFp32Rule rule;
  return rule;
}

}  // namespace npud
