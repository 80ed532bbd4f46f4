// Finding the fused-op patterns in a trace; the FUSE00x rules turn matches into Findings
// (rules/pattern_rule.hpp). Matching order: roots from the last op to the first, so the largest
// expression is matched first and its inner ops are not matched again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/dataflow.hpp"
#include "graph/patterns.hpp"

namespace npud::graph {

struct PatternMatch {
  uint32_t root = 0;       // node of the expression's last op
  uint32_t anchor = 0;     // node that locates it (the rsqrt, the softmax, ...)
  uint32_t last = 0;       // last node incl. the optional weight/bias tail
  std::vector<uint32_t> nodes;   // every node covered, sorted, unique
  int64_t ops = 0;         // ops that run kernels (views excluded)
  int64_t bytes = 0;       // intermediate bytes written and read back (2 x output size)
  NormForm form;            // norms: which form ran (patterns.hpp)
};

std::vector<PatternMatch> find_matches(const DataflowGraph& g, const PatternSpec& spec);

// The first torch_npu version (knowledge base, oldest first) that lists the pattern's fused
// op, or "" if none does.
std::string min_torch_npu(const PatternSpec& spec);

}  // namespace npud::graph
