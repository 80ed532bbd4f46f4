// SwiGLU: silu(a) * b, with a and b from two projections or from one projection chunked /
// split in two; also silu written out as a * sigmoid(a) * b.
#include "graph/forms.hpp"
#include "graph/patterns.hpp"

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
    s.snippet =
        "# one projection to 2*hidden, gate first: npu_swiglu(x, dim=-1) = silu(x1) * x2 for x1, x2 = x.chunk(2, -1)\n"
        "h = torch_npu.npu_swiglu(self.w13(x), dim=-1)\n"
        "# with two projections: torch_npu.npu_swiglu(torch.cat((self.w1(x), self.w3(x)), dim=-1))";
    s.notes = {"Merging w1 and w3 into one linear also saves a matmul launch."};
    return s;
  }();
  return spec;
}

}  // namespace npud::graph
