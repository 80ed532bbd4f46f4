#include "graph/affinity.hpp"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "knowledge/knowledge.hpp"

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
// The weight operand of a `* weight` tail is `weight + c` made in the forward (Gemma's
// `output * (1.0 + self.weight.float())`): an add of one tensor and a number, casts skipped.
bool offset_weight(const DataflowGraph& g, uint32_t tail, const std::vector<uint32_t>& matched) {
  for (const Value& v : g.inputs(tail)) {
    if (v.node != kNone && std::find(matched.begin(), matched.end(), v.node) != matched.end()) continue;
    Value w = g.resolve(v);
    if (w.node == kNone) return false;   // a parameter or another leaf: a plain weight
    const Node& p = g.node(w.node);
    return (p.base == "add" || p.base == "add_") && p.inputs_count == 1;
  }
  return false;
}

}  // namespace

std::string NormForm::key() const {
  return fmt::format("{}{}{}", weight == Weight::Plain ? "w" : weight == Weight::Offset ? "c+w" : "-", bias ? "+b" : "",
                     std_plus_eps ? " std" : "");
}

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
      if (dim > 0 && spec.weight_tail) {
        if (uint32_t u = affine_tail(g, m.last, "mul", dim, m.nodes); u != kNone) {
          m.last = u;
          if (offset_weight(g, u, m.nodes)) m.form.weight = NormForm::Weight::Offset;
        } else {
          m.form.weight = NormForm::Weight::None;
        }
      }
      if (dim > 0 && spec.bias_tail && m.last != i)
        if (uint32_t u = affine_tail(g, m.last, "add", dim, m.nodes); u != kNone) {
          m.last = u;
          m.form.bias = true;
        }
    }
    std::sort(m.nodes.begin(), m.nodes.end());
    m.nodes.erase(std::unique(m.nodes.begin(), m.nodes.end()), m.nodes.end());
    m.anchor = i;
    m.form.std_plus_eps = std::any_of(m.nodes.begin(), m.nodes.end(), [&](uint32_t x) { return g.node(x).base == "std"; });
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

}  // namespace npud::graph
