// The fused-op patterns: one file per pattern in graph/patterns/, each a declarative
// expression (graph/pattern.hpp) plus what replaces it on Ascend. The FUSE00x rules report them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/pattern.hpp"

namespace npud::graph {

// Which form of a norm ran (patterns with a weight tail), so its fix computes what the code
// computed (issue 41): `* weight`, `* (c + weight)` made in the forward (Gemma's zero-centred
// `1 + weight`) or no weight; a `+ bias` tail or none; the variance as an unbiased std plus eps
// (`(x - mean) / (x.std() + eps)`), which no fused norm computes.
struct NormForm {
  enum class Weight : uint8_t { Plain, Offset, None };
  Weight weight = Weight::Plain;
  bool bias = false;
  bool std_plus_eps = false;
  std::string key() const;   // groups the matches of one site by form
};

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
  // Norms: the fix for the form that ran, computing what the matched code computes
  // (tests/e2e/test_fix_equivalence.py); unset: `snippet` for every form.
  std::function<std::string(const NormForm&)> fix_for;
  // Norms: why the fused op would not compute what this form computes ("" when it does): the
  // fix then gives no code (issue 41: a fix never changes the model's maths).
  std::function<std::string(const NormForm&)> differs_for;
  std::vector<std::string> notes;

  std::string fix_of(const NormForm& form) const { return fix_for ? fix_for(form) : snippet; }
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
