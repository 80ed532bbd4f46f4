// AMP003 amp-loss-scale: loss-scale advice from the gradient magnitude histograms of an fp16
// amp-check run: how many gradient elements fp16 flushes to zero (below 2^-24) or overflows
// (above 65504) at the scale in use, and the initial scale (a power of two) that keeps the
// largest gradient in range. bf16 needs no loss scaling. See docs/rules/AMP003.md.
#include <cmath>

#include <fmt/format.h>

#include "analysis/amp.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/amp_rules.hpp"
#include "rules/amp_support.hpp"

namespace npud {
namespace {

class LossScaleRule final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"AMP003", "amp-loss-scale",
        "fp16 gradient underflow/overflow and the initial loss scale to use (amp-check captures)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (t.grad_histograms.empty()) return;
    AmpHeader h = amp_header(t);
    if (!h.fp16()) return;   // bf16 has fp32's exponent range: no loss scaling needed
    GradAdvice g = grad_advice(t);
    if (g.nonzero == 0) return;
    double suggested = std::ldexp(1.0, g.suggested_log2);
    bool bad = g.underflow_share_used >= kGradUnderflowShareBad || (!g.scaled && g.overflow > 0);
    // The program has its own GradScaler: it covers underflow unless its scale is too small,
    // and it handles overflow itself (skips the step, halves the scale). When it was disabled
    // here (no CUDA), judge it at the 2^16 it starts at on the NPU.
    if (scaler_use(t).scale > 0) {
      double at_scale = g.scaled ? g.underflow_share_used : g.underflow_share_default_scale;
      if (at_scale < kGradUnderflowShareBad) return;
      bad = true;
      if (!g.scaled) g.underflow_share_used = at_scale, g.scaled = true, g.loss_scale = 65536;
    }
    Finding f;
    f.rule = "AMP003";
    f.severity = bad ? Severity::Warning : Severity::Info;
    // Unscaled: where the optimizer steps (a Trainer's lever is its fp16 setting, data/advice).
    if (g.scaled) f.location.op = "optimizer.step";
    else f.location = optimizer_step_location(ctx);
    std::string now = g.scaled ? fmt::format("at the loss scale in use ({})", g.loss_scale) : "without loss scaling";
    f.message = fmt::format("{:.2f}% of nonzero gradient elements fall below fp16's 2^-24 and become 0 {}{}; "
                            "largest gradients ~2^{}: start the loss scale at 2^{} = {}",
                            100 * g.underflow_share_used, now,
                            g.overflow > 0 ? fmt::format(", {} exceed 65504 even unscaled", g.overflow) : "",
                            g.max_log2, g.suggested_log2, suggested);
    f.metrics = {{"underflow_share", g.underflow_share},
                 {"underflow_share_in_use", g.underflow_share_used},
                 {"overflow_share", g.overflow_share},
                 {"max_log2", double(g.max_log2)},
                 {"suggested_scale", suggested},
                 {"underflow_share_at_suggested", g.underflow_share_suggested},
                 {"steps", double(g.histograms)}};
    if (g.scaled) f.metrics.push_back({"loss_scale", g.loss_scale});
    f.fix = advice("AMP003", "fix", {{"scale", suggested}, {"log2", g.suggested_log2}});
    f.notes.push_back(advice("AMP003", "scale_note",
                             {{"log2", g.suggested_log2}, {"max_log2", g.max_log2}, {"max_log2_end", g.max_log2 + 1}}));
    if (g.underflow_share_suggested >= kGradUnderflowShareBad)
      f.notes.push_back(advice("AMP003", "still_underflows_note",
                               {{"log2", g.suggested_log2},
                                {"percent", fmt::format("{:.2f}", 100 * g.underflow_share_suggested)}}));
    if (g.overflow > 0) f.notes.push_back(advice("AMP003", "overflow_note"));
    f.notes.push_back(advice("AMP", "scaler_sync_note"));
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& amp003_rule() {
  static const LossScaleRule rule;
  return rule;
}

}  // namespace npud
