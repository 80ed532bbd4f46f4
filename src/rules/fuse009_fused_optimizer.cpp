// FUSE009 fused-optimizer: profiles whose optimizer step is a torch.optim class torch_npu has
// a fused replacement for (torch_npu.optim.NpuFusedAdamW...), from the profiler's
// `Optimizer.step#<Class>.step` ranges, the advisor's affinity-API optimizer rules
// (timeline_fusion_ops.yaml). NPU profiles only: captures are FUSE007's (it sees the
// per-parameter loop itself).
// See docs/rules/FUSE009.md.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "model/trace.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

// torch.optim (and apex-style) classes with a torch_npu.optim.NpuFused<Class>.
constexpr std::string_view kFusible[] = {"AdamW", "SGD",   "Adadelta", "Lamb",      "AdamP",
                                         "BertAdam", "RMSprop", "RMSpropTF", "Adam"};

// "Optimizer.step#AdamW.step" -> "AdamW"; "" when the name is not an optimizer step range.
std::string_view optimizer_class(std::string_view name) {
  constexpr std::string_view prefix = "Optimizer.step#", suffix = ".step";
  if (!name.starts_with(prefix) || !name.ends_with(suffix) || name.size() <= prefix.size() + suffix.size()) return {};
  return name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
}

struct StepGroup {
  size_t count = 0, inner_ops = 0, foreach_ops = 0;
  int64_t time_ns = 0;
};

class FusedOptimizer final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"FUSE009", "fused-optimizer",
        "optimizer steps of a class torch_npu fuses (torch_npu.optim.NpuFusedAdamW...): profiles",
        Severity::Info};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    // NPU profiles only, as the advisor: captures are FUSE007's (it judges the loop from the
    // dataflow), and a GPU profile's AdamW.step runs CUDA's fused/foreach kernels.
    if (t.caps.dispatched_ops || t.env_value("device") != "npu") return;
    std::map<std::string, StepGroup> groups;
    for (size_t i = 0; i < t.ops.size(); ++i) {
      const Op& op = t.ops[i];
      std::string_view cls = optimizer_class(t.str(op.name));
      if (cls.empty() || std::find(std::begin(kFusible), std::end(kFusible), cls) == std::end(kFusible)) continue;
      StepGroup& g = groups[std::string(cls)];
      ++g.count;
      g.time_ns += op.dur_ns;
      // The aten ops the step ran (same thread, inside its range): per-parameter work shows
      // as many small ops, foreach as _foreach_* ones.
      for (size_t j = i + 1; j < t.ops.size() && t.ops[j].start_ns < op.start_ns + op.dur_ns; ++j) {
        const Op& in = t.ops[j];
        if (in.pid != op.pid || in.tid != op.tid || in.kind != OpKind::Aten) continue;
        ++g.inner_ops;
        if (t.str(in.name).find("_foreach_") != std::string_view::npos) ++g.foreach_ops;
      }
    }
    for (const auto& [cls, g] : groups) {
      Finding f;
      f.rule = std::string(id());
      f.severity = Severity::Info;
      f.location.op = fmt::format("Optimizer.step#{}.step", cls);
      f.metrics = {{"count", double(g.count)},
                   {"time_ns", double(g.time_ns)},
                   {"inner_ops", double(g.inner_ops)},
                   {"foreach_ops", double(g.foreach_ops)}};
      std::string how = g.inner_ops == 0 ? std::string()
                        : g.foreach_ops > 0
                            ? fmt::format(", {} host ops per step ({} foreach)", g.inner_ops / g.count,
                                          g.foreach_ops / g.count)
                            : fmt::format(", {} host ops per step, one set per parameter", g.inner_ops / g.count);
      f.message = fmt::format("{}.step: {} step{}, {} on the host{}; torch_npu.optim.NpuFused{} updates all "
                              "parameters with a few fused kernels",
                              cls, g.count, g.count == 1 ? "" : "s", format_duration(g.time_ns), how, cls);
      f.fix = advice("FUSE009", "fix", {{"optimizer", cls}});
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& fuse009_rule() {
  static const FusedOptimizer rule;
  return rule;
}

}  // namespace npud
