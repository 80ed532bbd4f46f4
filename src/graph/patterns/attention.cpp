// Scaled dot-product attention written out:
//   matmul(q, k^T) -> scale (mul/div by a number, optional) -> mask (add, masked_fill or
//   where, optional; before or after the scale) -> softmax (softmax/_softmax, or written out:
//   exp(s - max(s)) / sum(exp(...))) -> dropout (optional) -> matmul(., v)
// 4-D matmul reaches the trace as expand/clone/_unsafe_view/bmm: all skipped but the bmm.
#include "graph/forms.hpp"
#include "graph/patterns.hpp"
#include "knowledge/advice_texts.hpp"

namespace npud::graph {

const PatternSpec& attention_pattern() {
  static const PatternSpec spec = [] {
    using namespace forms;
    PatternSpec s;
    Vars v;
    static const auto kMatmul = {std::string_view("bmm"), std::string_view("mm"), std::string_view("matmul")};
    P scores = op(kMatmul, {any(), any()});
    auto masked = [](P e) {
      return alt({e, op_c({"add"}, {e, any()}), op({"masked_fill"}, {e, any()}), op({"where"}, {any(), e, any()})});
    };
    P pre = alt({masked(scaled(v, scores)), scaled(v, masked(scores))});
    auto [z1, z2] = v.twice(pre);
    P shifted = alt({op({"sub"}, {z1, op({"max", "amax"}, {z2})}), pre});
    auto [e1, e2] = v.twice(op({"exp"}, {shifted}));
    P softmax = alt({op({"softmax", "_softmax", "_safe_softmax"}, {pre}), divide(e1, op({"sum"}, {e2}))});
    // Dropout: the op itself, or (CPU, torch < 2) probs * (bernoulli mask / keep).
    P dropped = alt({op({"dropout", "native_dropout", "feature_dropout"}, {softmax}), softmax,
                     op_c({"mul"}, {softmax, any()})});
    s.expr = op(kMatmul, {dropped, any()});
    s.vars = v.count();
    s.rule = "FUSE004";
    s.name = "attention";
    s.title = "attention written out";
    s.roots = {"bmm", "mm", "matmul"};
    s.anchors = {"softmax", "_softmax", "_safe_softmax", "exp"};
    s.api = "torch_npu.npu_fusion_attention";
    s.custom_op = "npu_fusion_attention";
    s.snippet = advice("FUSE004", "snippet");
    s.notes = {advice("FUSE004", "sdpa_note"), advice("FUSE004", "mask_note")};
    return s;
  }();
  return spec;
}

}  // namespace npud::graph
