// AMP004 amp-gradscaler-missing: an fp16 amp-check run that trains (optimizer steps were
// recorded) but never calls GradScaler.scale: small gradients vanish in fp16. bf16 runs are
// not reported (bf16 has fp32's exponent range). See docs/rules/AMP004.md.
#include <fmt/format.h>

#include "analysis/amp.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/amp_rules.hpp"
#include "rules/amp_support.hpp"

namespace npud {
namespace {

class GradScalerMissingRule final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"AMP004", "amp-gradscaler-missing",
        "fp16 training without a GradScaler (amp-check captures; bf16 needs none)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (!t.has_amp()) return;
    AmpHeader h = amp_header(t);
    if (!h.fp16()) return;
    ScalerUse use = scaler_use(t);
    GradAdvice g = grad_advice(t);
    bool trains = g.histograms > 0 || use.step > 0;
    if (!trains || use.scale > 0 || g.scaled) return;
    Finding f;
    f.rule = "AMP004";
    f.severity = Severity::Warning;
    // Where autocast is entered, when the program does it itself.
    for (const AmpCall& c : t.amp_calls)
      if (c.kind == AmpApi::Autocast) {
        f.location = call_location(t, c);
        break;
      }
    if (f.location.op.empty()) f.location = optimizer_step_location(ctx);
    f.message = g.nonzero > 0
                    ? fmt::format("training in fp16 without a GradScaler: {:.2f}% of nonzero gradient elements fall "
                                  "below 2^-24 and become 0 in fp16 ({} optimizer steps recorded)",
                                  100 * g.underflow_share, g.histograms)
                    : fmt::format("training in fp16 without a GradScaler ({} optimizer steps recorded)",
                                  std::max(g.histograms, use.step));
    f.metrics = {{"steps", double(std::max(g.histograms, use.step))}, {"underflow_share", g.underflow_share}};
    if (g.have_hist) f.metrics.push_back({"suggested_scale", double(int64_t(1) << g.suggested_log2)});
    f.fix = advice("AMP004", "fix",
                   {{"init_scale", g.have_hist ? fmt::format("init_scale=2.0**{}", g.suggested_log2) : ""}});
    f.notes.push_back(advice("AMP", "scaler_sync_note"));
    if (std::string m = measurement_note(h); !m.empty()) f.notes.push_back(m);
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& amp004_rule() {
  static const GradScalerMissingRule rule;
  return rule;
}

}  // namespace npud
