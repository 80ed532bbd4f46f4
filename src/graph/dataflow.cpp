#include "graph/dataflow.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "analysis/names.hpp"

namespace npud::graph {
namespace {

// Views: the output aliases the input and no kernel runs.
const std::unordered_set<std::string_view>& free_views() {
  static const std::unordered_set<std::string_view> s = {
      "view", "_reshape_alias", "reshape", "_unsafe_view", "expand", "expand_as", "unsqueeze", "squeeze",
      "transpose", "t", "permute", "slice", "select", "detach", "alias", "narrow", "flatten", "unflatten",
      "view_as", "lift_fresh", "split", "chunk", "unbind", "split_with_sizes", "movedim", "numpy_T"};
  return s;
}

// Copies and casts: a kernel runs, but the value is the same for pattern purposes.
const std::unordered_set<std::string_view>& value_copies() {
  static const std::unordered_set<std::string_view> s = {"_to_copy", "to", "type_as", "clone", "contiguous"};
  return s;
}

// Key of a tensor for producer lookup: its id, else storage + offset + shape hashed (tagged
// with bit 62 so it never equals an id), else kUnset (no linkage possible).
int64_t tensor_key(const Trace& t, const TensorMeta& m) {
  if (m.id != kUnset) return m.id & ~(int64_t(1) << 62);
  if (m.storage == kUnset) return kUnset;
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(uint64_t(m.storage));
  mix(uint64_t(m.storage_offset));
  for (int64_t d : t.shape(m)) mix(uint64_t(d));
  return int64_t((h & ((uint64_t(1) << 62) - 1)) | (uint64_t(1) << 62));
}

uint64_t frame_key(const Trace& t, const Op& op) {
  const Frame* f = t.user_frame(op);
  if (!f) return 0;
  return (uint64_t(f->file) << 32) | uint32_t(f->line);
}

bool is_backward_name(std::string_view base) { return base.find("backward") != std::string_view::npos; }

}  // namespace

bool DataflowGraph::is_free_view(std::string_view base) { return free_views().count(base) > 0; }
bool DataflowGraph::is_pass_through(std::string_view base) {
  return free_views().count(base) > 0 || value_copies().count(base) > 0;
}

DataflowGraph::DataflowGraph(const Trace& trace) : t_(trace) {
  const auto& ops = t_.ops;
  // Edges come from recorded outputs (captures). A profile without any (Kineto, torch_npu)
  // would give a graph of lone nodes that no pattern can match: skip building it, which
  // keeps big profiles' memory and time down.
  if (std::none_of(ops.begin(), ops.end(), [](const Op& op) { return op.outputs_count > 0; })) return;
  // Lines where autograd ran (loss.backward()): every op there belongs to the backward pass.
  std::unordered_set<uint64_t> backward_lines;
  // Besides ops named *backward*, loss.backward() starts with ones_like(loss) outside any
  // module: the implicit gradient seed (a Linear-only model has no *backward* op at all).
  // Ops the capture marked as backward (`bwd`) carry their forward op's line: not a backward line.
  for (const Op& op : ops) {
    if (op.kind != OpKind::Aten || op.backward) continue;
    std::string_view base = aten_base(t_.str(op.name));
    bool seed = false;
    if (base == "ones_like" && op.module == 0) {
      auto in = t_.inputs(op);
      seed = in.size() == 1 && t_.tensors[in[0]].has_shape && t_.tensors[in[0]].rank == 0;
    }
    if (!seed && !is_backward_name(base)) continue;
    if (uint64_t k = frame_key(t_, op)) backward_lines.insert(k);
  }

  std::unordered_map<int64_t, Value> producer;
  size_t scope_begin = 0;
  int32_t scope = -1;
  bool scope_has_module = false, scope_has_backward = false, seen_backward = false;
  auto same_scope = [&](const Op& a, const Op& b) { return a.pid == b.pid && a.tid == b.tid && a.step_index == b.step_index; };

  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.kind != OpKind::Aten) continue;
    // Only top-level aten ops: the children of a composite op (or of an API call torch_npu
    // implements its own way, OpKind::Api) are its implementation, not the user's code.
    if (op.parent != kNone && (ops[op.parent].kind == OpKind::Aten || ops[op.parent].kind == OpKind::Api)) continue;
    if (scope < 0 || !same_scope(ops[scope_begin], op)) {
      producer.clear();
      ++scope;
      scope_begin = i;
      seen_backward = false;
      // Look ahead over the scope once (ops of a thread are contiguous and sorted by time).
      scope_has_module = scope_has_backward = false;
      for (size_t j = i; j < ops.size() && same_scope(ops[j], op); ++j) {
        if (ops[j].kind != OpKind::Aten) continue;
        scope_has_module |= ops[j].module != 0;
        scope_has_backward |= ops[j].backward || is_backward_name(aten_base(t_.str(ops[j].name)));
      }
    }
    Node n;
    n.op = uint32_t(i);
    n.base = aten_base(t_.str(op.name));
    n.scope = scope;
    n.is_view = is_free_view(n.base);
    n.pass_through = n.is_view || value_copies().count(n.base) > 0;
    bool at_backward_line = !backward_lines.empty() && op.module == 0 && backward_lines.count(frame_key(t_, op));
    if (op.backward || is_backward_name(n.base) || at_backward_line || (scope_has_backward && !scope_has_module)) {
      n.phase = Phase::Backward;
      seen_backward = true;
    } else if (seen_backward && op.module == 0) {
      n.phase = Phase::AfterBackward;
    }
    uint32_t id = uint32_t(nodes_.size());
    n.inputs_begin = uint32_t(inputs_.size());
    for (uint32_t r : t_.inputs(op)) {
      const TensorMeta& m = t_.tensors[r];
      if (!m.is_tensor) continue;
      Value v;
      int64_t key = tensor_key(t_, m);
      if (key != kUnset) {
        auto it = producer.find(key);
        if (it != producer.end()) v = it->second;
        else v.leaf = key;
      }
      inputs_.push_back(v);
      input_refs_.push_back(r);
    }
    n.inputs_count = uint32_t(inputs_.size()) - n.inputs_begin;
    auto outs = t_.outputs(op);
    for (uint32_t s = 0; s < outs.size(); ++s) {
      int64_t key = tensor_key(t_, t_.tensors[outs[s]]);
      if (key != kUnset) producer[key] = Value{id, s, kUnset};
    }
    nodes_.push_back(n);
  }

  // Consumers, compressed: count, prefix-sum, fill.
  std::vector<uint32_t> count(nodes_.size() + 1, 0);
  for (const Value& v : inputs_)
    if (v.node != kNone) ++count[v.node];
  uint32_t acc = 0;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    nodes_[n].users_begin = acc;
    acc += count[n];
    count[n] = nodes_[n].users_begin;
  }
  users_.resize(acc);
  for (uint32_t n = 0; n < nodes_.size(); ++n)
    for (const Value& v : inputs(n))
      if (v.node != kNone) {
        // A node reading the same producer twice (x * x) is listed once.
        uint32_t b = nodes_[v.node].users_begin, e = count[v.node];
        if (e > b && users_[e - 1] == n) continue;
        users_[count[v.node]++] = n;
      }
  for (size_t n = 0; n < nodes_.size(); ++n) nodes_[n].users_count = count[n] - nodes_[n].users_begin;
}

const TensorMeta* DataflowGraph::output(uint32_t n, uint32_t slot) const {
  auto outs = t_.outputs(t_.ops[nodes_[n].op]);
  return slot < outs.size() ? &t_.tensors[outs[slot]] : nullptr;
}

const TensorMeta* DataflowGraph::input_meta(uint32_t n, uint32_t i) const {
  return i < nodes_[n].inputs_count ? &t_.tensors[input_refs_[nodes_[n].inputs_begin + i]] : nullptr;
}

int64_t DataflowGraph::bytes(const TensorMeta& m) const { return tensor_bytes(t_, m); }

Value DataflowGraph::resolve(Value v) const {
  // Bounded: pass-through chains are short; the bound guards against malformed cycles.
  for (int guard = 0; guard < 64 && v.node != kNone; ++guard) {
    const Node& n = nodes_[v.node];
    if (!n.pass_through || n.inputs_count == 0) break;
    v = inputs_[n.inputs_begin];
  }
  return v;
}

}  // namespace npud::graph
