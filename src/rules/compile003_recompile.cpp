// COMPILE003 recompile: torch.compile recompiles a function whose guards failed, at the program's lines. See docs/rules/COMPILE003.md.
#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "knowledge/advice_texts.hpp"
#include "model/trace.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

// dynamo's name for the code after a graph break in `function`: "torch_dynamo_resume_in_forward_at_31".
constexpr std::string_view kResumePrefix = "torch_dynamo_resume_in_";

// A guard on a tensor's size or stride: a new input shape (dynamo then compiles the function
// again, and marks the dimension dynamic after a second one unless dynamic=False).
bool shape_guard(std::string_view reason) {
  return reason.find("size mismatch") != std::string_view::npos ||
         reason.find("stride mismatch") != std::string_view::npos;
}

// The capture's record of dynamo's recompile log (the shim's _compiled.CompileWatch): one
// finding per compiled function, at the line it is defined, with the first guard that failed.
class RecompileRule final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"COMPILE003", "recompile",
                                    "torch.compile recompiles a function whose guards failed, at the program's lines",
                                    Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    for (const Recompile& r : ctx.trace.capture.recompiles) {
      Finding f;
      f.rule = std::string(id());
      f.severity = info().severity;
      f.location.file = r.file;
      f.location.line = r.line;
      std::string_view fn = r.function;
      std::string what = fn.starts_with(kResumePrefix)
                             ? fmt::format("the code after a graph break ({})", fn)
                             : fmt::format("`{}`", fn.empty() ? std::string_view("a function") : fn);
      f.message = fmt::format("torch.compile recompiles {} ({} recompile{}): {}", what, r.count, r.count == 1 ? "" : "s",
                              r.reason.empty() ? "a guard failed (dynamo gave no reason)" : r.reason);
      f.fix = advice("COMPILE003", shape_guard(r.reason) ? "fix_shape" : "fix");
      f.notes.push_back(advice("COMPILE003", "defined_note"));
      for (const std::string& other : r.other_reasons)
        f.notes.push_back(advice("COMPILE003", "other_reason_note", {{"reason", other}}));
      f.metrics.push_back({"count", double(r.count)});
      if (r.step >= 0) f.metrics.push_back({"first_step", double(r.step)});
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& compile003_rule() {
  static const RecompileRule rule;
  return rule;
}

}  // namespace npud
