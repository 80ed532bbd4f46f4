// COMPILE002 graph-break: torch.compile graph breaks at the program's lines. See docs/rules/COMPILE002.md.
#include <algorithm>

#include <fmt/format.h>

#include "knowledge/advice_texts.hpp"
#include "model/trace.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

// The capture's record of dynamo's graph-break log (the shim's _compiled.CompileWatch): one
// finding per program line, with dynamo's own reason, explanation and hint.
class GraphBreakRule final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"COMPILE002", "graph-break", "torch.compile graph breaks at the program's lines",
                                    Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const CaptureStatus& c = ctx.trace.capture;
    for (const GraphBreak& g : c.graph_breaks) {
      Finding f;
      f.rule = std::string(id());
      f.severity = info().severity;
      f.location.file = g.file;
      f.location.line = g.line;
      f.message = fmt::format("torch.compile breaks its graph here{}: {}{}", g.count > 1 ? fmt::format(" ({} compiles)", g.count) : "",
                              g.reason.empty() ? "a reason dynamo did not give" : g.reason,
                              g.explanation.empty() ? "" : fmt::format(" ({})", g.explanation));
      f.fix = advice("COMPILE002", "fix");
      if (!g.hint.empty()) f.notes.push_back(fmt::format("dynamo's hint: {}", g.hint));
      if (c.graphs_compiled > 0)
        f.notes.push_back(advice("COMPILE002", "graphs_note", {{"compiled", c.graphs_compiled},
                                                               {"in_steps", std::max<int64_t>(0, c.graphs_in_steps)}}));
      f.metrics.push_back({"count", double(g.count)});
      if (g.step >= 0) f.metrics.push_back({"first_step", double(g.step)});
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& compile002_rule() {
  static const GraphBreakRule rule;
  return rule;
}

}  // namespace npud
