#include "graph/optimizer_loop.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace npud::graph {
namespace {

struct UnionFind {
  std::vector<uint32_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  uint32_t find(uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(uint32_t a, uint32_t b) {
    a = find(a), b = find(b);
    if (a != b) parent[a < b ? b : a] = a < b ? a : b;   // the earlier node stays the root
  }
};

uint64_t frame_key(const Frame& f) { return (uint64_t(f.file) << 32) | uint32_t(f.line); }

// The lines that call optimizer.step() (capture `optimizer_config` events).
std::unordered_set<uint64_t> optimizer_call_lines(const Trace& t) {
  std::unordered_set<uint64_t> out;
  for (const Op& op : t.ops)
    if (op.kind == OpKind::OptimizerStep)
      if (const Frame* f = t.user_frame(op)) out.insert(frame_key(*f));
  return out;
}

// The line an op's chain belongs to: the optimizer.step() call it runs under (an optimizer
// class in the program's own file updates at several lines of its step()), else its own line.
uint64_t line_key(const Trace& t, const Op& op, const std::unordered_set<uint64_t>& step_calls) {
  if (op.stack == kNone) return 0;
  for (uint32_t id : t.frames_of(op.stack))
    if (step_calls.contains(frame_key(t.frames[id]))) return frame_key(t.frames[id]);
  const Frame* f = t.user_frame(op);
  return f ? frame_key(*f) : 0;
}

// Storages the forward pass reads as leaves (tensors not made in the step): the parameters,
// and the batch. An optimizer update writes into one of them in place; clip_grad_norm_
// (writes .grad), feature-building helpers and logging after backward do not.
std::unordered_set<int64_t> forward_leaf_storages(const DataflowGraph& g) {
  std::unordered_set<int64_t> out;
  for (uint32_t i = 0; i < g.size(); ++i) {
    if (g.node(i).phase != Phase::Forward) continue;
    // What an in-place op writes is not read as a leaf: `p.grad.zero_()` before the first
    // backward of a step (zero_grad inside an LBFGS closure) does not make .grad a parameter.
    std::string_view base = g.node(i).base;
    const uint32_t first = !base.empty() && base.back() == '_' ? 1 : 0;
    auto in = g.inputs(i);
    for (uint32_t k = first; k < in.size(); ++k) {
      if (in[k].node != kNone) continue;
      const TensorMeta* m = g.input_meta(i, k);
      if (m && m->storage != kUnset) out.insert(m->storage);
    }
  }
  return out;
}

// An in-place op (add_, addcdiv_, copy_...) whose written tensor lives in one of `storages`.
bool writes_into(const DataflowGraph& g, uint32_t n, const std::unordered_set<int64_t>& storages) {
  std::string_view base = g.node(n).base;
  if (base.empty() || base.back() != '_' || g.node(n).inputs_count == 0) return false;
  const TensorMeta* self = g.input_meta(n, 0);
  return self && self->storage != kUnset && storages.count(self->storage) > 0;
}

}  // namespace

std::vector<LoopGroup> find_optimizer_loops(const DataflowGraph& g, size_t min_ops, size_t min_repeats) {
  const Trace& t = g.trace();
  const size_t n = g.size();
  // Candidate nodes: after backward, outside modules, not free views. group[i] = line group.
  std::vector<uint32_t> group(n, kNone);
  std::vector<uint64_t> group_line;
  const std::unordered_set<uint64_t> step_calls = optimizer_call_lines(t);
  {
    std::unordered_map<uint64_t, uint32_t> ids;
    int32_t scope = -1;
    for (uint32_t i = 0; i < n; ++i) {
      const Node& node = g.node(i);
      const Op& op = t.ops[node.op];
      if (node.phase != Phase::AfterBackward || op.module != 0 || node.is_view) continue;
      if (node.scope != scope) {
        ids.clear();
        scope = node.scope;
      }
      uint64_t key = line_key(t, op, step_calls);
      auto [it, inserted] = ids.try_emplace(key, uint32_t(group_line.size()));
      if (inserted) group_line.push_back(key);
      group[i] = it->second;
    }
  }
  UnionFind uf(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (group[i] == kNone) continue;
    for (const Value& v : g.inputs(i)) {
      // Through free views (a parameter's .view) to the op that made the value.
      Value r = v;
      while (r.node != kNone && g.node(r.node).is_view && g.node(r.node).inputs_count) r = g.inputs(r.node)[0];
      if (r.node != kNone && group[r.node] == group[i]) uf.unite(r.node, i);
    }
  }
  // One chain per parameter: updates of the same parameter at one line are one chain even where
  // no value flows between them (`p.data.mul_(1 - lr * wd)` then `p.add_(update)`: `.data` is
  // another tensor over the same storage).
  const std::unordered_set<int64_t> params = forward_leaf_storages(g);
  {
    std::unordered_map<uint64_t, uint32_t> first_writer;   // (line group, storage) -> node
    for (uint32_t i = 0; i < n; ++i) {
      if (group[i] == kNone || !writes_into(g, i, params)) continue;
      uint64_t key = (uint64_t(group[i]) << 40) ^ uint64_t(g.input_meta(i, 0)->storage);
      auto [it, inserted] = first_writer.try_emplace(key, i);
      if (!inserted) uf.unite(it->second, i);
    }
  }
  // Chains: signature of each component, in node order (the root is its first node), and
  // whether it updates a parameter (only such chains are an optimizer's).
  std::unordered_map<uint32_t, std::string> signature;
  std::unordered_map<uint32_t, size_t> length;
  std::unordered_set<uint32_t> updates;
  for (uint32_t i = 0; i < n; ++i) {
    if (group[i] == kNone) continue;
    uint32_t r = uf.find(i);
    std::string& s = signature[r];
    if (!s.empty()) s += ',';
    s += g.node(i).base;
    ++length[r];
    if (writes_into(g, i, params)) updates.insert(r);
  }
  // Count chains per (line group, signature) and keep repeated ones; then merge across scopes
  // by (line, signature).
  struct Count { size_t chains = 0, in_steps = 0, in_first_step = 0; uint32_t first = 0; size_t ops = 0; };
  std::unordered_map<std::string, Count> per_group;
  std::vector<std::string> order;
  for (uint32_t i = 0; i < n; ++i) {
    if (group[i] == kNone || uf.find(i) != i) continue;
    if (length[i] < min_ops || !updates.count(i)) continue;
    std::string key = std::to_string(group[i]) + '\x1f' + signature[i];
    auto [it, inserted] = per_group.try_emplace(key);
    if (inserted) {
      it->second.first = i;
      it->second.ops = length[i];
      order.push_back(key);
    }
    ++it->second.chains;
    if (t.ops[g.node(i).op].step_index >= 0) ++it->second.in_steps;
    if (t.ops[g.node(i).op].step_index == 0) ++it->second.in_first_step;
  }
  std::vector<LoopGroup> out;
  std::unordered_map<std::string, size_t> merged;
  for (const std::string& key : order) {
    const Count& c = per_group[key];
    if (c.chains < min_repeats) continue;
    uint32_t gid = group[c.first];
    std::string sig = key.substr(key.find('\x1f') + 1);
    // One line is one optimizer: chains of other shapes there (Adam's first step creating
    // its state, a param group without weight decay) are the same loop.
    auto [it, inserted] = merged.try_emplace(std::to_string(group_line[gid]), out.size());
    if (inserted) {
      LoopGroup lg;
      lg.signature = sig;
      lg.first_node = c.first;
      lg.chain_ops = c.ops;
      out.push_back(lg);
    }
    LoopGroup& lg = out[it->second];
    if (lg.signature != sig && std::find(lg.other_signatures.begin(), lg.other_signatures.end(), sig) ==
                                   lg.other_signatures.end())
      lg.other_signatures.push_back(sig);
    lg.chains += c.chains;
    lg.chains_in_steps += c.in_steps;
    lg.chains_in_first_step += c.in_first_step;
    ++lg.scopes;
  }
  return out;
}

}  // namespace npud::graph
