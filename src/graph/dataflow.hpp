// The dataflow graph of a capture: one node per top-level aten op, one edge per tensor
// input, linking it to the op that produced that tensor (by tensor id; by storage, offset and
// shape when ids are missing). Edges never cross a step or a thread: a tensor made in step 1
// and read in step 2 is a leaf in step 2. In-place ops (add_, mul_) become the producer of
// the tensor they update, so a chain of in-place updates is a chain of edges.
//
// Phases: patterns describe forward code, so every node is tagged
//   Backward       ops run by autograd: an op named *backward*, any op at a user line
//                  (file:line) where such an op ran, and a thread that has backward ops but
//                  never runs inside a module (the autograd engine's device thread);
//   AfterBackward  ops outside any module after the first backward op of the step and
//                  thread (optimizer.step(), zero_grad, logging);
//   Forward        everything else (module forwards, loss code before backward).
// Build cost is linear in the number of ops (one hash map per scope, cleared between scopes).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "model/trace.hpp"

namespace npud::graph {

enum class Phase : uint8_t { Forward, Backward, AfterBackward };

// What an op input is: output `slot` of node `node`, or a leaf tensor made outside this
// step/thread (node == kNone, leaf = its key). node == kNone and leaf == kUnset: absent.
struct Value {
  uint32_t node = kNone;
  uint32_t slot = 0;
  int64_t leaf = kUnset;

  bool present() const { return node != kNone || leaf != kUnset; }
  bool operator==(const Value& o) const { return node == o.node && slot == o.slot && leaf == o.leaf; }
};

struct Node {
  uint32_t op = 0;              // index into Trace::ops
  std::string_view base;        // "mul", "add_", "_softmax" (overload and namespace removed)
  Phase phase = Phase::Forward;
  bool pass_through = false;    // views, casts, copies: matchers may skip them
  bool is_view = false;         // pass-through and free (no kernel): not counted as an op
  uint32_t inputs_begin = 0, inputs_count = 0;   // into DataflowGraph::inputs (tensor inputs)
  uint32_t users_begin = 0, users_count = 0;     // into DataflowGraph::users (consumer nodes)
  int32_t scope = 0;            // index of the (pid, tid, step) scope
};

class DataflowGraph {
 public:
  explicit DataflowGraph(const Trace& trace);

  const Trace& trace() const { return t_; }
  size_t size() const { return nodes_.size(); }
  const Node& node(uint32_t n) const { return nodes_[n]; }
  const std::vector<Node>& nodes() const { return nodes_; }

  std::span<const Value> inputs(uint32_t n) const {
    return {inputs_.data() + nodes_[n].inputs_begin, nodes_[n].inputs_count};
  }
  std::span<const uint32_t> users(uint32_t n) const {
    return {users_.data() + nodes_[n].users_begin, nodes_[n].users_count};
  }
  // The tensor metadata of output `slot` of node n, or nullptr.
  const TensorMeta* output(uint32_t n, uint32_t slot = 0) const;
  // The tensor metadata of input i of node n (tensor inputs only), or nullptr.
  const TensorMeta* input_meta(uint32_t n, uint32_t i) const;
  // Bytes of a tensor (dtype size x elements; 4 bytes per element when the dtype is unknown).
  int64_t bytes(const TensorMeta& m) const;

  // Where a value really comes from: pass-through producers (views, casts, copies) skipped.
  Value resolve(Value v) const;

  // Op names matchers treat as pass-through / as free views (base names).
  static bool is_pass_through(std::string_view base);
  static bool is_free_view(std::string_view base);

 private:
  const Trace& t_;
  std::vector<Node> nodes_;
  std::vector<Value> inputs_;
  std::vector<uint32_t> input_refs_;   // parallel to inputs_: index into Trace::tensors
  std::vector<uint32_t> users_;
};

}  // namespace npud::graph
