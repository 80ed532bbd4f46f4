// SwiGLU: silu(a) * b, with a and b from two projections or from one projection chunked /
// split in two; also silu written out as a * sigmoid(a) * b.
#include "graph/forms.hpp"
#include "graph/patterns.hpp"
#include "knowledge/advice_texts.hpp"

namespace npud::graph {

const PatternSpec& swiglu_pattern() {
  static const PatternSpec spec = [] {
    PatternSpec s;
    Vars v;
    P a = v.var();
    s.expr = alt({product({op({"silu"}, {any()}), any()}), product({a, op({"sigmoid"}, {a}), any()})});
    s.vars = v.count();
    s.rule = "FUSE005";
    s.name = "swiglu";
    s.title = "SwiGLU";
    s.roots = {"mul"};
    s.anchors = {"silu", "sigmoid"};
    s.api = "torch_npu.npu_swiglu";
    s.custom_op = "npu_swiglu";
    s.snippet = advice("FUSE005", "snippet");
    s.notes = {advice("FUSE005", "note")};
    return s;
  }();
  return spec;
}

}  // namespace npud::graph
