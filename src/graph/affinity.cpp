#include "graph/affinity.hpp"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "graph/optimizer_loop.hpp"
#include "knowledge/knowledge.hpp"
#include "rules/npu_cost.hpp"
#include "rules/rule_support.hpp"

namespace npud::graph {
namespace {

// The single consumer of node n's output, views and casts followed (pushed onto `path`), or kNone.
uint32_t single_consumer(const DataflowGraph& g, uint32_t n, std::vector<uint32_t>& path) {
  uint32_t cur = n;
  for (int guard = 0; guard < 16; ++guard) {
    // Forward consumers only: autograd keeps forward tensors for the backward pass.
    uint32_t u = kNone;
    for (uint32_t c : g.users(cur)) {
      if (g.node(c).phase != Phase::Forward) continue;
      if (u != kNone) return kNone;
      u = c;
    }
    if (u == kNone) return kNone;
    if (!g.node(u).pass_through) return u;
    path.push_back(u);
    cur = u;
  }
  return kNone;
}

// `* weight` / `+ bias` after a norm: a mul/add whose other operand is a 1-D tensor as long as
// the normalised (last) dim.
uint32_t affine_tail(const DataflowGraph& g, uint32_t last, std::string_view base, int64_t dim,
                     std::vector<uint32_t>& nodes) {
  std::vector<uint32_t> path;
  uint32_t u = single_consumer(g, last, path);
  if (u == kNone || g.node(u).base != base || g.node(u).phase != Phase::Forward || g.node(u).inputs_count != 2)
    return kNone;
  uint32_t feeder = path.empty() ? last : path.back();
  auto in = g.inputs(u);
  int mine = in[0].node == feeder ? 0 : in[1].node == feeder ? 1 : -1;
  if (mine < 0) return kNone;
  const TensorMeta* other = g.input_meta(u, uint32_t(1 - mine));
  if (!other || !other->has_shape) return kNone;
  auto shape = g.trace().shape(*other);
  if (shape.empty() || numel(shape) != dim) return kNone;
  nodes.insert(nodes.end(), path.begin(), path.end());
  nodes.push_back(u);
  return u;
}

// The program's line of a matched op (rules/rule_support.hpp location_of: a match inside an
// installed package is anchored at the program's frame that led there), the op's own module.
Location locate(const TraceIndex& index, uint32_t op_index) {
  Location loc = location_of(index, op_index);
  const Trace& t = index.trace();
  loc.module = std::string(t.str(t.ops[op_index].module));
  return loc;
}

}  // namespace

std::vector<PatternMatch> find_matches(const DataflowGraph& g, const PatternSpec& spec) {
  std::vector<PatternMatch> out;
  const size_t n = g.size();
  std::vector<uint8_t> claimed(n, 0);
  for (std::string_view other : spec.yields_to)
    if (const PatternSpec* o = find_pattern(other); o && o != &spec)
      for (const PatternMatch& m : find_matches(g, *o))
        for (uint32_t node : m.nodes) claimed[node] = 1;

  Matcher matcher(g);
  MatchState st;
  for (uint32_t i = uint32_t(n); i-- > 0;) {
    const Node& node = g.node(i);
    if (claimed[i] || node.phase != Phase::Forward) continue;
    if (std::find(spec.roots.begin(), spec.roots.end(), node.base) == spec.roots.end()) continue;
    if (!matcher.match_at(spec.expr, spec.vars, i, st)) continue;
    PatternMatch m;
    m.root = m.last = i;
    m.nodes = st.nodes;
    if (spec.weight_tail || spec.bias_tail) {
      const TensorMeta* o = g.output(i);
      int64_t dim = o && o->has_shape && o->rank ? g.trace().shape(*o).back() : -1;
      if (dim > 0 && spec.weight_tail)
        if (uint32_t u = affine_tail(g, m.last, "mul", dim, m.nodes); u != kNone) m.last = u;
      if (dim > 0 && spec.bias_tail && m.last != i)
        if (uint32_t u = affine_tail(g, m.last, "add", dim, m.nodes); u != kNone) m.last = u;
    }
    std::sort(m.nodes.begin(), m.nodes.end());
    m.nodes.erase(std::unique(m.nodes.begin(), m.nodes.end()), m.nodes.end());
    m.anchor = i;
    for (uint32_t x : m.nodes)
      if (std::find(spec.anchors.begin(), spec.anchors.end(), g.node(x).base) != spec.anchors.end()) {
        m.anchor = x;
        break;
      }
    for (uint32_t x : m.nodes) {
      claimed[x] = 1;
      if (g.node(x).is_view) continue;
      ++m.ops;
      if (x == m.last) continue;
      if (const TensorMeta* o = g.output(x)) m.bytes += 2 * g.bytes(*o);
    }
    out.push_back(std::move(m));
  }
  std::reverse(out.begin(), out.end());   // trace order
  return out;
}

// The oldest released wheel that has the op, else the oldest development tip.
std::string min_torch_npu(const PatternSpec& spec) {
  auto has = [&](const KnowledgeVersion& v) {
    if (!spec.custom_op.empty()) return v.is_custom(spec.custom_op);
    return !spec.aten_op.empty() && v.has_npu_kernel(spec.aten_op);
  };
  for (bool releases : {true, false})
    for (const KnowledgeVersion& v : Knowledge::builtin().versions())
      if (v.is_release() == releases && has(v)) return v.version;
  return "";
}

namespace {

struct Site {
  Location location;
  std::vector<std::string> modules;
  size_t count = 0, in_steps = 0, in_first_step = 0;
  int64_t ops = 0, bytes = 0;       // totals over matches
  int64_t ops_each = 0;
};

std::string modules_text(const std::vector<std::string>& mods) {
  if (mods.empty()) return "";
  if (mods.size() == 1) return mods[0];
  return fmt::format("{} and {} more", mods[0], mods.size() - 1);
}

}  // namespace

void report_pattern(const AnalysisContext& ctx, const PatternSpec& spec, std::vector<Finding>& out) {
  const Trace& t = ctx.trace;
  const DataflowGraph& g = ctx.dataflow();
  std::vector<PatternMatch> matches = find_matches(g, spec);
  std::vector<Site> sites;
  std::unordered_map<std::string, size_t> index;
  for (const PatternMatch& m : matches) {
    uint32_t op = g.node(m.anchor).op;
    Location loc = locate(ctx.index(), op);
    std::string key = loc.file.empty() ? "module:" + loc.module : site_key(loc);
    auto [it, inserted] = index.try_emplace(key, sites.size());
    if (inserted) {
      Site s;
      s.location = loc;
      s.ops_each = m.ops;
      sites.push_back(std::move(s));
    }
    Site& s = sites[it->second];
    ++s.count;
    if (t.ops[op].step >= 0) ++s.in_steps;
    if (t.ops[op].step == 0) ++s.in_first_step;
    s.ops += std::max<int64_t>(0, m.ops - spec.replacement_ops);
    s.bytes += m.bytes;
    if (!loc.module.empty() && std::find(s.modules.begin(), s.modules.end(), loc.module) == s.modules.end())
      s.modules.push_back(loc.module);
  }
  if (sites.empty()) return;
  std::string min_version = min_torch_npu(spec);
  bool available = !spec.custom_op.empty() ? ctx.npu.is_custom(spec.custom_op)
                                           : spec.aten_op.empty() || ctx.npu.has_npu_kernel(spec.aten_op);
  for (const Site& s : sites) {
    Finding f;
    f.rule = std::string(spec.rule);
    f.severity = Severity::Info;
    f.location = s.location;
    double ps = ctx.index().per_step(s.in_steps, s.in_first_step, s.count);
    double scale = s.count ? ps / double(s.count) : 0;
    double ops_ps = double(s.ops) * scale, bytes_ps = double(s.bytes) * scale;
    std::string where = s.location.file.empty() ? s.location.module : npud::where(s.location);
    std::string mods = modules_text(s.modules);
    f.message = fmt::format("{} at {}{}: {}, {} ops each; {} would remove about {} ops and {} of memory "
                            "traffic per {}",
                            spec.title, where, mods.empty() || where == mods ? "" : " (" + mods + ")",
                            times_text(ctx.index(), s.count, s.in_steps, s.in_first_step), s.ops_each, spec.api,
                            format_number(ops_ps), format_bytes(bytes_ps), t.steps.empty() ? "run" : "step");
    f.metrics = {{"occurrences", double(s.count)},
                 {"per_step", ps},
                 {"ops_per_match", double(s.ops_each)},
                 {"ops_removed_per_step", ops_ps},
                 {"bytes_saved_per_step", bytes_ps}};
    f.cost_ns = int64_t(double(s.ops) * cost::kLaunchNs + double(s.bytes) / cost::kDeviceBytesPerNs);
    std::string version = min_version.empty() ? "" : fmt::format(" (torch_npu >= {})", min_version);
    f.fix = fmt::format("Use {}{}:\n{}", spec.api, version, spec.snippet);
    if (!available && !min_version.empty())
      f.notes.push_back(fmt::format("{} is not in torch_npu {}'s op list; it is listed from {} on", spec.api,
                                    ctx.npu.version, min_version));
    if (s.modules.size() > 1) {
      std::string all;
      for (size_t i = 0; i < s.modules.size() && i < 8; ++i) all += (i ? ", " : "") + s.modules[i];
      if (s.modules.size() > 8) all += ", ...";
      f.notes.push_back("modules: " + all);
    }
    for (std::string_view n : spec.notes) f.notes.emplace_back(n);
    f.notes.push_back(fmt::format("savings estimated from the matched ops' output sizes (each intermediate written "
                                  "once and read once); op list: {}", ctx.npu.describe()));
    out.push_back(std::move(f));
  }
}

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

}  // namespace

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
    f.location = locate(ctx.index(), op);
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
      f.fix = "This loop is hand-written: run the same update over all parameters at once with torch._foreach_* "
              "ops (the same maths, one op per kind).\ntorch._foreach_add_(params, grads, alpha=-lr)  # p -= lr * g "
              "for every p\nA plain SGD loop is torch.optim.SGD(params, lr=lr), which picks the multi-tensor path.";
    else if (!is_torch_optimizer(t.str(optimizer->name)))
      f.fix = fmt::format("{} (not a torch.optim class) updates one parameter at a time: use its foreach/fused "
                          "option if it has one, or write its update with torch._foreach_* ops; another optimizer "
                          "class would change the training, so none is suggested.",
                          t.str(optimizer->name));
    else if (fused_off && foreach == "None" && torch_defaults_to_foreach_on_npu(t))
      f.fix = fmt::format("{} is created with fused=False and foreach left unset: torch picks foreach only when both "
                          "are unset, so this runs one parameter at a time on every device. Pass foreach=True (the "
                          "same update), or leave fused unset.\nopt = torch.optim.AdamW(groups, lr=lr, betas=betas, "
                          "foreach=True)   # instead of fused=use_fused when use_fused is False",
                          t.str(optimizer->name));
    else if (foreach == "False")
      f.fix = fmt::format("{} is created with foreach=False: drop it (torch >= 2.1 picks foreach on NPU) or pass "
                          "foreach=True.\nopt = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=True)",
                          t.str(optimizer->name));
    else
      f.fix = fmt::format("{} runs the per-parameter path on NPU with this torch ({}): torch picks foreach for NPU "
                          "only from torch 2.1; pass foreach=True.\nopt = torch.optim.AdamW(model.parameters(), "
                          "lr=3e-4, foreach=True)",
                          t.str(optimizer->name), settings);
    f.notes.push_back("the chain is counted per parameter: ops outside modules after backward at the optimizer's "
                      "call line, grouped by dataflow");
    for (const std::string& other : lg.other_signatures)
      f.notes.push_back(fmt::format("also at this line, counted here: chains {}", other));
    f.notes.push_back(
        "torch_npu's fused optimizer classes are not in this knowledge base, so none is suggested by name");
    out.push_back(std::move(f));
  }
}

}  // namespace npud::graph
