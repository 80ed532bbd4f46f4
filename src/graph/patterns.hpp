// The fused-op patterns: one file per pattern in graph/patterns/, each a declarative
// expression (graph/pattern.hpp) plus what replaces it on Ascend. The FUSE00x rules report them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "graph/pattern.hpp"

namespace npud::graph {

struct PatternSpec {
  std::string_view rule;                  // "FUSE001"
  std::string_view name;                  // "rms-norm"
  std::string_view title;                 // "RMSNorm"
  std::vector<std::string_view> roots;    // base names of the expression's last op
  std::vector<std::string_view> anchors;  // the op whose user frame locates a finding
  P expr;
  int vars = 0;
  // Optional trailing affine ops taken into the match: `* weight` (1-D, last dim) and
  // `+ bias` (norms).
  bool weight_tail = false;
  bool bias_tail = false;
  // Roots already covered by these patterns' matches are skipped (a LayerNorm whose
  // centred input is reused looks like an RMSNorm of it).
  std::vector<std::string_view> yields_to;
  std::string_view api;                   // what to call instead
  // Knowledge names that give the minimum torch_npu version: an npu custom op
  // ("npu_rms_norm"), else an aten op with an NPU kernel ("native_layer_norm").
  std::string_view custom_op;
  std::string_view aten_op;
  int replacement_ops = 1;                // ops the fused call runs
  std::string snippet;                    // the fix, as code (data/texts/rules.tsv)
  // The fix of a norm's other forms (PatternMatch::variant): `* (1 + weight)` and no weight.
  // Each computes what the matched code computes (tests/e2e/test_fix_equivalence.py).
  std::string offset_weight_snippet, no_weight_snippet;
  std::vector<std::string> notes;

  const std::string& snippet_for(std::string_view variant) const {
    if (variant == "offset_weight" && !offset_weight_snippet.empty()) return offset_weight_snippet;
    if (variant == "no_weight" && !no_weight_snippet.empty()) return no_weight_snippet;
    return snippet;
  }
};

const PatternSpec& rms_norm_pattern();
const PatternSpec& layer_norm_pattern();
const PatternSpec& rotary_pattern();
const PatternSpec& attention_pattern();
const PatternSpec& swiglu_pattern();
const PatternSpec& gelu_pattern();

// All subgraph patterns, in rule id order.
const std::vector<const PatternSpec*>& all_patterns();
const PatternSpec* find_pattern(std::string_view name);

}  // namespace npud::graph
