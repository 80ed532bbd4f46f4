// CAPTURE001 capture-incomplete: a capture that does not hold what was asked for, said before
// every other finding (an all-clear about half a run is worse than no report): the shim
// stopped after an internal error, the program raised while recording, it was killed before
// the capture was closed, or amp-check ran nothing in low precision. See docs/rules/CAPTURE001.md.
#include <charconv>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "analysis/amp.hpp"
#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "model/trace.hpp"
#include "rules/builtin_rules.hpp"

namespace npud {
namespace {

// How many steps the capture asked for (its header's "steps": "A:B", "N", "A:" or "all"), or
// -1 when it runs to the program's end or is not known.
int64_t requested_steps(std::string_view spec) {
  auto number = [](std::string_view v, int64_t& out) {
    auto r = std::from_chars(v.data(), v.data() + v.size(), out);
    return !v.empty() && r.ec == std::errc() && r.ptr == v.data() + v.size() && out >= 0;
  };
  int64_t a = 0, b = 0;
  size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return number(spec, a) ? 1 : -1;
  if (!number(spec.substr(0, colon), a) || !number(spec.substr(colon + 1), b) || b < a) return -1;
  return b - a + 1;
}

// "(2 of the 100 requested steps (--steps 1:100) complete, 812 ops; step 3 was cut off after 40 ops)"
std::string recorded(const Trace& t) {
  size_t steps = t.steps.size();
  std::string_view spec = t.env_value("steps");
  int64_t asked = requested_steps(spec);
  std::string count =
      asked >= 0 ? fmt::format("{} of the {} requested step{} (--steps {}) complete", steps, asked,
                               asked == 1 ? "" : "s", spec)
                 : fmt::format("{} complete step{}{}", steps, steps == 1 ? "" : "s",
                               spec.empty() ? "" : fmt::format(" (--steps {})", spec));
  std::string cut = t.capture.unended_step_ops == 0
                        ? ""
                        : fmt::format("; step {} was cut off after {} op{} (left out of per-step rates)",
                                      t.capture.unended_step, t.capture.unended_step_ops,
                                      t.capture.unended_step_ops == 1 ? "" : "s");
  return fmt::format("the findings below cover only what was recorded before it ({}, {} op{}{})", count,
                     t.ops.size(), t.ops.size() == 1 ? "" : "s", cut);
}

// amp-check whose measured ops all ran in fp32 (issue 41: Lightning's closure steps): a drift
// report of fp32 against fp32 is no answer.
bool amp_without_low_precision(const Trace& t) {
  if (t.env_value("amp_dtype").empty()) return false;
  AmpCounts c = amp_counts(t);
  return c.measured > 0 && c.lowp == 0;
}

class CaptureIncomplete final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"CAPTURE001", "capture-incomplete",
        "the capture stopped early: the shim's internal error, the program's exception or a kill (captures)",
        Severity::Error};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (!t.caps.end_status) return;
    const CaptureStatus& c = t.capture;
    Finding f;
    f.rule = "CAPTURE001";
    f.severity = Severity::Error;
    f.first = true;
    if (!c.error.empty()) {
      std::string at = c.error_op.empty() ? "" : fmt::format(" while recording {}", c.error_op);
      std::string thread = c.error_thread.empty() ? "" : fmt::format(" on thread {}", c.error_thread);
      f.message = fmt::format("the capture shim stopped{}{} after an internal error: {}; {}", at, thread,
                              c.error, recorded(t));
      f.location.op = c.error_op;
      f.fix = advice("CAPTURE001", "fix_internal_error");
      if (!c.error_where.empty()) f.notes.push_back(advice("CAPTURE001", "raised_at_note", {{"where", c.error_where}}));
    } else if (c.reason == "exception") {
      f.message = fmt::format("the program raised {} while steps were being recorded; {}",
                              c.exception.empty() ? "an exception" : c.exception, recorded(t));
      f.fix = advice("CAPTURE001", "fix_program_error");
    } else if (!c.ended) {
      f.message = fmt::format("the capture has no end record: the program was killed, or ended without Python's "
                              "exit handlers, before the capture was closed; {}",
                              recorded(t));
      f.fix = advice("CAPTURE001", "fix_cut_short");
    } else if (amp_without_low_precision(t)) {
      f.message = fmt::format("amp-check ran none of the {} ops it measured in {}: the program stayed in fp32, so "
                              "the drift report compares fp32 with fp32",
                              t.numerics.size(), t.env_value("amp_dtype"));
      f.fix = advice("CAPTURE001", "fix_no_low_precision");
    } else {
      return;
    }
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& capture001_rule() {
  static const CaptureIncomplete rule;
  return rule;
}

}  // namespace npud
