// Per-parameter optimizer loops: an optimizer written as `for p in params:` (torch's
// foreach=False path, hand-written SGD/Adam) runs the same short chain of small ops once per
// parameter. Found without knowing the optimizer: after the backward pass, outside any module,
// the ops at one user line (the `opt.step()` call) are split into connected chains by the
// dataflow edges among them; chains that write in place into a parameter (a storage the
// forward pass read as a leaf) and have the same op sequence are counted. A hand-written
// `p.data.add_(p.grad, alpha=-lr)` is a one-op chain; clip_grad_norm_ (writes .grad) and
// helpers that build new tensors are not optimizers. Linear: one pass and a union-find.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/dataflow.hpp"

namespace npud::graph {

struct LoopGroup {
  std::string signature;        // "mul_,mul_,add_,mul_,addcmul_,sqrt,div,add_,addcdiv_"
  std::vector<std::string> other_signatures;   // other chain shapes at the same line
  uint32_t first_node = 0;      // first node of the first chain (locates the finding)
  size_t chain_ops = 0;         // ops per chain
  size_t chains = 0;            // chains over the whole trace
  size_t chains_in_steps = 0;
  size_t chains_in_first_step = 0;   // of chains_in_steps, in the first step (TraceIndex::per_step)
  size_t scopes = 0;            // (step, thread) scopes it was seen in
};

// Parameter-updating chains of at least `min_ops` ops repeated at least `min_repeats` times
// in one scope.
std::vector<LoopGroup> find_optimizer_loops(const DataflowGraph& g, size_t min_ops = 1, size_t min_repeats = 4);

}  // namespace npud::graph
