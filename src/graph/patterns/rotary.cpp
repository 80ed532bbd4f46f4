// Rotary position embedding:
//   rotate_half (llama / NeoX):  x * cos + cat(-x2, x1) * sin
//   interleaved (GPT-J):          x * cos + stack(-x_odd, x_even, -1).flatten(-2) * sin
//   complex (Meta llama):         view_as_real(view_as_complex(x.reshape(..., -1, 2)) * freqs_cis)
//   pairs (llama without complex, torchtune): x0, x1 = x.reshape(..., -1, 2).unbind(-1);
//                                 stack(x0 * cos - x1 * sin, x1 * cos + x0 * sin, -1).flatten(-2)
// Slices, reshapes and casts between the ops are skipped by the matcher.
#include "graph/forms.hpp"
#include "graph/patterns.hpp"
#include "knowledge/advice_texts.hpp"

namespace npud::graph {

const PatternSpec& rotary_pattern() {
  static const PatternSpec spec = [] {
    PatternSpec s;
    Vars v;
    P x = v.var();
    P rotated = op_c({"cat", "stack"}, {op({"neg"}, {x}), x});
    P real_form = op_c({"add"}, {op_c({"mul"}, {x, any()}), op_c({"mul"}, {rotated, any()})});
    P complex_form = op({"view_as_real"}, {op_c({"mul"}, {op({"view_as_complex"}, {any()}), any()})});
    // x0 and x1 are views of one tensor (select/unbind of its pairs): both resolve to x.
    P pair_form = op({"stack"}, {op({"sub"}, {op_c({"mul"}, {x, any()}), op_c({"mul"}, {x, any()})}),
                                 op_c({"add"}, {op_c({"mul"}, {x, any()}), op_c({"mul"}, {x, any()})})});
    s.expr = alt({real_form, complex_form, pair_form});
    s.vars = v.count();
    s.rule = "FUSE003";
    s.name = "rotary-embedding";
    s.title = "rotary embedding";
    s.roots = {"add", "view_as_real", "stack"};
    s.anchors = {"add", "view_as_real"};   // the pair form: its "add" (x1 * cos + x0 * sin)
    s.api = "torch_npu.npu_rotary_mul";
    s.custom_op = "npu_rotary_mul";
    s.snippet = advice("FUSE003", "snippet");
    s.notes = {advice("FUSE003", "note")};
    return s;
  }();
  return spec;
}

}  // namespace npud::graph
