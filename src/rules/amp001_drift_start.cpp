// AMP001 amp-drift-start: the first op (program order) whose own low-precision error crosses
// the docs/metrics.md thresholds: where the low-precision run starts to drift from its fp32
// shadow. Needs an amp-check capture. See docs/rules/AMP001.md.
#include <fmt/format.h>

#include "analysis/amp.hpp"
#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/amp_rules.hpp"
#include "rules/amp_support.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

std::string describe(const TensorMetrics& m) {
  std::string s = m.finite == 0 && m.n > 0
                      ? std::string("no finite element left")
                      : fmt::format("cos {}, {:.1f}% of elements beyond 5e-3 relative error", cos_text(m.cos),
                                    100 * m.gt_5e3);
  if (m.overflow > 0) s += fmt::format(", {} overflowed", m.overflow);
  if (m.gained_nonfinite()) s += fmt::format(", {} new NaN/Inf", m.nan + m.inf - m.nan_ref - m.inf_ref);
  if (m.underflow > 0) s += fmt::format(", {} flushed to 0", m.underflow);
  return s;
}

class DriftStartRule final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"AMP001", "amp-drift-start",
        "the first op whose low-precision result drifts from its fp32 shadow (amp-check captures)",
        Severity::Error};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (t.numerics.empty()) return;
    DriftStart s = find_drift_start(t);
    if (s.op == kNone) return;
    const OpNumeric& n = t.numerics[t.ops[s.op].numeric];
    AmpHeader h = amp_header(t);
    std::string dtype = n.dtype ? std::string(t.str(n.dtype)) : h.dtype;
    Finding f;
    f.rule = "AMP001";
    f.location = location_of(ctx.index(), s.op);
    if (f.location.module.empty()) f.location.module = amp_place(t, s.op).module;
    bool overflow = n.lowp && n.local.overflow > 0;   // fp32 results above 65504 count too: not an overflow
    bool broken = n.drift.gained_nonfinite() || n.local.gained_nonfinite() || overflow;
    f.severity = broken ? Severity::Error : Severity::Warning;
    std::string at = where(f.location);
    if (!s.gradual) {
      f.message = fmt::format("drift starts at {} ({}{}): in {} it alone gives {}", f.location.op, at,
                              f.location.module.empty() ? "" : ", module " + f.location.module, dtype,
                              describe(n.local));
    } else {
      f.message = fmt::format("drift builds up gradually and first crosses the thresholds at {} ({}{}): "
                              "accumulated error {}", f.location.op, at,
                              f.location.module.empty() ? "" : ", module " + f.location.module, describe(n.drift));
    }
    f.metrics = {{"local_cos", n.local.cos},
                 {"local_gt_5e3", n.local.gt_5e3},
                 {"local_max_rel", n.local.max_rel},
                 {"local_overflow", double(n.local.overflow)},
                 {"local_underflow", double(n.local.underflow)},
                 {"drift_cos", n.drift.cos},
                 {"drift_gt_5e3", n.drift.gt_5e3},
                 {"drift_max_rel", n.drift.max_rel},
                 {"diverging_ops", double(s.diverging_local)},
                 {"drifting_ops", double(s.diverging_drift)}};
    if (t.ops[s.op].step_index >= 0) f.metrics.push_back({"step", double(t.steps[size_t(t.ops[s.op].step_index)].number)});
    std::string_view base = aten_base(f.location.op);
    if (s.gradual) {
      f.fix = advice("AMP001", "fix_gradual");
    } else if (overflow || n.local.gained_nonfinite()) {
      f.fix = advice("AMP001", "fix_overflow",
                     {{"op", f.location.op},
                      {"base", base},
                      {"then", advice("AMP001", base == "exp" ? "fix_overflow_exp" : "fix_overflow_other")}});
    } else {
      f.fix = advice("AMP001", "fix", {{"op", f.location.op}, {"dtype", short_dtype(dtype)}});
    }
    f.notes.push_back(advice("AMP001", "drift_note", {{"drift", describe(n.drift)}}));
    if (s.diverging_local > 1) f.notes.push_back(advice("AMP001", "diverging_note", {{"count", s.diverging_local}}));
    if (overflow || n.drift.gained_nonfinite()) f.notes.push_back(advice("AMP", "overflow_mode_note"));
    if (std::string m = measurement_note(h); !m.empty()) f.notes.push_back(m);
    f.notes.push_back(advice("AMP001", "thresholds_note"));
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& amp001_rule() {
  static const DriftStartRule rule;
  return rule;
}

}  // namespace npud
