// AMP005 amp-gradscaler-misuse: GradScaler calls in an order that breaks loss scaling,
// per recorded step: step() without scale(), unscale_() after step(), update() before
// step(), update() never called, or scale() with the optimizer stepped directly.
// See docs/rules/AMP005.md.
#include <vector>

#include <fmt/format.h>

#include "analysis/amp.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/amp_rules.hpp"
#include "rules/amp_support.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

struct Misuse {
  std::string_view kind;
  size_t steps = 0;                 // steps where it happened
  const AmpCall* first = nullptr;   // first offending call
};

class GradScalerMisuseRule final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"AMP005", "amp-gradscaler-misuse",
        "GradScaler used out of order: step without scale, unscale_ after step, update missing (amp-check captures)",
        Severity::Error};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (t.amp_calls.empty()) return;
    ScalerUse use = scaler_use(t);
    if (use.scale + use.unscale + use.step + use.update == 0) return;

    // GradScaler's unit is the iteration: scale, [unscale_], step (one per optimizer), update.
    // A recorded step ends at optimizer.step(), so the update() of an iteration falls into the
    // next recorded step: iterations are cut at update(), not by step number. Optimizers are
    // not told apart (the records do not name them), so patterns that are legal with several
    // optimizers (step, unscale_ of another one, step) are not reported.
    std::vector<const AmpCall*> calls;   // sorted by time
    for (const AmpCall& c : t.amp_calls)
      if (c.kind == AmpApi::Scale || c.kind == AmpApi::Unscale || c.kind == AmpApi::Step || c.kind == AmpApi::Update)
        calls.push_back(&c);
    Misuse no_scale{"step-without-scale"}, unscale_after{"unscale-after-step"}, update_before{"update-before-step"};
    auto mark = [](Misuse& m, const AmpCall* c) {
      ++m.steps;
      if (!m.first) m.first = c;
    };
    size_t iterations = 0;
    bool prev_scaled_not_stepped = false;   // the previous iteration's update() came before its step()
    size_t begin = 0;
    for (size_t i = 0; i <= calls.size(); ++i) {
      if (i < calls.size() && calls[i]->kind != AmpApi::Update) continue;
      // calls[begin, i): one iteration's calls before its update() (calls[i], when recorded)
      bool scaled = false, stepped = false, reported_no_scale = false, reported_unscale = false;
      for (size_t k = begin; k < i; ++k) {
        const AmpCall* c = calls[k];
        if (c->kind == AmpApi::Scale) {
          scaled = true;
        } else if (c->kind == AmpApi::Step) {
          if (!scaled && !reported_no_scale && !prev_scaled_not_stepped) {
            mark(no_scale, c);
            reported_no_scale = true;
          }
          stepped = true;
        } else if (c->kind == AmpApi::Unscale && stepped && !reported_unscale) {
          bool step_follows = false;
          for (size_t j = k + 1; j < i; ++j) step_follows = step_follows || calls[j]->kind == AmpApi::Step;
          if (!step_follows) {   // unscaling what was already stepped
            mark(unscale_after, c);
            reported_unscale = true;
          }
        }
      }
      bool has_update = i < calls.size();
      if (has_update && scaled && !stepped) mark(update_before, calls[i]);
      prev_scaled_not_stepped = has_update && scaled && !stepped;
      if (i > begin || has_update) ++iterations;
      begin = i + 1;
    }

    auto first_of = [&](AmpApi kind) -> const AmpCall* {
      for (const AmpCall& c : t.amp_calls)
        if (c.kind == kind) return &c;
      return nullptr;
    };
    size_t steps = std::max(iterations, t.grad_histograms.size());
    if (no_scale.first)
      emit(t, out, *no_scale.first, no_scale.steps, steps,
           "scaler.step(optimizer) without scaler.scale(loss) before it",
           "step() unscales gradients that were never scaled: they shrink by the loss scale (or GradScaler raises "
           "\"_scale is None\")",
           "fix_step_without_scale");
    if (unscale_after.first)
      emit(t, out, *unscale_after.first, unscale_after.steps, steps, "scaler.unscale_(optimizer) after scaler.step()",
           "step() has already unscaled (and applied) the gradients; unscale_ after it raises or clips the wrong "
           "values",
           "fix_unscale_after_step");
    if (update_before.first)
      emit(t, out, *update_before.first, update_before.steps, steps, "scaler.update() before scaler.step()",
           "update() resets the overflow check of this step: step() then applies gradients that may hold Inf/NaN",
           "fix_update_before_step");
    // Two steps without an update() in between (with one, its update() may fall after the recording).
    if (use.scale > 0 && use.update == 0 && (use.step >= 2 || t.grad_histograms.size() >= 2))
      emit(t, out, *first_of(AmpApi::Scale), steps, steps, "scaler.update() is never called",
           "the loss scale never adapts: after one overflow every step is skipped, and it never grows back",
           "fix_update_missing");
    if (use.scale > 0 && use.step == 0 && !t.grad_histograms.empty())
      emit(t, out, *first_of(AmpApi::Scale), t.grad_histograms.size(), steps,
           "scaler.scale(loss) is used but the optimizer steps directly (no scaler.step)",
           "the optimizer applies gradients still multiplied by the loss scale, and overflowed steps are not skipped",
           "fix_step_unscaled");
  }

 private:
  static void emit(const Trace& t, std::vector<Finding>& out, const AmpCall& at, size_t affected, size_t steps,
                   std::string_view what, std::string_view why, std::string_view fix_key) {
    Finding f;
    f.rule = "AMP005";
    f.severity = Severity::Error;
    f.location = call_location(t, at);
    f.message = fmt::format("{} ({}): {} ({} of {} recorded steps)", what, where(f.location), why, affected,
                            std::max(affected, steps));
    f.metrics = {{"steps_affected", double(affected)}, {"steps", double(std::max(affected, steps))}};
    f.fix = advice("AMP005", fix_key);
    f.notes.push_back(advice("AMP", "scaler_sync_note"));
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& amp005_rule() {
  static const GradScalerMisuseRule rule;
  return rule;
}

}  // namespace npud
