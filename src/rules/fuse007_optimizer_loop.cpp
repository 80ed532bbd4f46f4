// FUSE007 optimizer-loop: per-parameter optimizer loops (see graph/optimizer_loop.hpp and
// docs/rules/FUSE007.md).
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "graph/optimizer_loop.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/npu_cost.hpp"
#include "rules/rule_support.hpp"

namespace npud::graph {
namespace {

// Whether torch picks the multi-tensor (foreach) path on its own for NPU parameters: from
// torch 2.1 `_default_to_fused_or_foreach` lists the privateuse1 backend (npu) among the
// foreach devices; torch 1.x and 2.0 default to the per-parameter loop there.
bool torch_defaults_to_foreach_on_npu(const Trace& t) {
  std::string_view v = t.env_value("torch");
  int major = 0, minor = 0;
  if (std::sscanf(std::string(v).c_str(), "%d.%d", &major, &minor) != 2) return false;
  return major > 2 || (major == 2 && minor >= 1);
}

// The optimizer.step() recorded at the loop's user line (file:line of opt.step()), or nullptr: a
// loop at a line with no optimizer.step() is hand-written. Its name is the optimizer's class
// ("torch.optim.adamw.AdamW", a library's or the program's own), its detail the settings.
const Op* optimizer_at(const Trace& t, const Op& loop_op) {
  if (loop_op.stack == kNone) return nullptr;
  auto loop_frames = t.frames_of(loop_op.stack);
  for (const Op& op : t.ops) {
    if (op.kind != OpKind::OptimizerStep) continue;
    const Frame* f = t.user_frame(op);
    // the call line, or an outer frame of an update inside the program's own optimizer class
    for (uint32_t id : loop_frames)
      if (f && t.frames[id].file == f->file && t.frames[id].line == f->line) return &op;
  }
  return nullptr;
}

bool is_torch_optimizer(std::string_view cls) { return cls.starts_with("torch.optim."); }

// FUSE007: per-parameter optimizer loops (see optimizer_loop.hpp).
void report_optimizer_loops(const AnalysisContext& ctx, std::vector<Finding>& out) {
  const Trace& t = ctx.trace;
  const DataflowGraph& g = ctx.dataflow();
  for (const LoopGroup& lg : find_optimizer_loops(g)) {
    uint32_t op = g.node(lg.first_node).op;
    const Op* optimizer = optimizer_at(t, t.ops[op]);
    std::string settings = optimizer ? std::string(t.str(optimizer->detail)) : std::string();
    std::string_view foreach = attribute_value(settings, "foreach"), fused = attribute_value(settings, "fused");
    // A torch optimizer left at its defaults runs foreach on NPU from torch 2.1: the loop seen
    // here is the CPU's single-tensor path, not what the NPU will run.
    // An explicit fused=False is not the default: torch picks foreach only when both are None
    // (torch/optim/adam.py, sgd.py), so fused=False with foreach left at None is the loop everywhere.
    const bool fused_off = fused == "False";
    if (optimizer && foreach == "None" && fused != "True" && !fused_off &&
        attribute_value(settings, "differentiable") != "True" && torch_defaults_to_foreach_on_npu(t))
      continue;
    Finding f;
    f.rule = "FUSE007";
    f.severity = Severity::Info;
    f.location = location_with_own_module(ctx.index(), op);
    double ps = ctx.index().per_step(lg.chains_in_steps, lg.chains_in_first_step, lg.chains);
    double steps = t.steps.empty() ? 1.0 : double(t.steps.size());
    // foreach runs each op kind once for all parameters: (chains - 1) x ops removed.
    double chains_per_scope = double(lg.chains) / double(std::max<size_t>(lg.scopes, 1));
    double removed_ps = std::max(0.0, chains_per_scope - 1.0) * double(lg.chain_ops) * double(lg.scopes) / steps;
    std::string where = npud::where(f.location);
    f.message = fmt::format("per-parameter optimizer loop at {}: the same {}-op chain ({}) runs {}; a "
                            "foreach/fused optimizer would remove about {} ops per step",
                            where, lg.chain_ops, lg.signature,
                            times_text(ctx.index(), lg.chains, lg.chains_in_steps, lg.chains_in_first_step),
                            format_number(removed_ps));
    f.metrics = {{"occurrences", double(lg.chains)},
                 {"per_step", ps},
                 {"ops_per_match", double(lg.chain_ops)},
                 {"ops_removed_per_step", removed_ps},
                 {"bytes_saved_per_step", 0}};
    f.cost_ns = int64_t(removed_ps * steps * cost::kLaunchNs);
    // Advice keeps the update's maths: another optimizer class would change the training.
    if (!optimizer)
      f.fix = advice("FUSE007", "fix_hand_written");
    else if (!is_torch_optimizer(t.str(optimizer->name)))
      f.fix = advice("FUSE007", "fix_not_torch_optim", {{"optimizer", t.str(optimizer->name)}});
    else if (fused_off && foreach == "None" && torch_defaults_to_foreach_on_npu(t))
      f.fix = advice("FUSE007", "fix_fused_off", {{"optimizer", t.str(optimizer->name)}});
    else if (foreach == "False")
      f.fix = advice("FUSE007", "fix_foreach_off", {{"optimizer", t.str(optimizer->name)}});
    else
      f.fix = advice("FUSE007", "fix_old_torch", {{"optimizer", t.str(optimizer->name)}, {"settings", settings}});
    f.notes.push_back(advice("FUSE007", "per_parameter_note"));
    for (const std::string& other : lg.other_signatures)
      f.notes.push_back(advice("FUSE007", "other_chain_note", {{"chain", other}}));
    f.notes.push_back(advice("FUSE007", "no_fused_classes_note"));
    out.push_back(std::move(f));
  }
}

}  // namespace
}  // namespace npud::graph

namespace npud {
namespace {

class OptimizerLoop final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"FUSE007", "optimizer-loop",
        "per-parameter optimizer loops (captures): use foreach/fused optimizers",
        Severity::Info};
    return kInfo;
  }
  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    graph::report_optimizer_loops(ctx, out);
  }
};

}  // namespace

const Rule& fuse007_rule() {
  static const OptimizerLoop rule;
  return rule;
}

}  // namespace npud
