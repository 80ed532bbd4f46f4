// GELU written out:
//   tanh form: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))  (x^3 as pow or x*x*x)
//   erf form:  x * 0.5 * (1 + erf(x / sqrt(2)))
// Factors in any order and grouping; the constants are not recorded by captures, the shape of
// the expression is what matches.
#include "graph/forms.hpp"
#include "graph/patterns.hpp"
#include "knowledge/advice_texts.hpp"

namespace npud::graph {

const PatternSpec& gelu_pattern() {
  static const PatternSpec spec = [] {
    using namespace forms;
    PatternSpec s;
    Vars v;
    P x = v.var();
    P inner = scaled(v, op_c({"add"}, {x, scaled(v, cube(v, x))}));
    P tanh_term = op_c({"add"}, {op({"tanh"}, {inner}), scalar()});
    P erf_term = op_c({"add"}, {op({"erf"}, {scaled(v, x)}), scalar()});
    s.expr = alt({product({x, tanh_term}), product({x, erf_term})});
    s.vars = v.count();
    s.rule = "FUSE006";
    s.name = "gelu";
    s.title = "GELU written out";
    s.roots = {"mul"};
    s.anchors = {"tanh", "erf"};
    s.api = "torch_npu.npu_gelu";
    s.custom_op = "npu_gelu";
    s.snippet = advice("FUSE006", "snippet");
    s.notes = {advice("FUSE006", "note")};
    return s;
  }();
  return spec;
}

}  // namespace npud::graph
