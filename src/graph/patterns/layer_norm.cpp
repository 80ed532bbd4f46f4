// LayerNorm written out: (x - mean(x)) / sqrt(var(x) + eps) [* weight + bias], with the
// variance as var(x, unbiased=False) or mean((x - mean(x))^2), the division as a multiply by
// rsqrt, or the std form (x - mean) / (x.std() + eps).
// The fix is F.layer_norm / nn.LayerNorm, which torch_npu runs as one fused kernel
// (native_layer_norm). There is no NpuLayerNorm in any torch_npu version (NPU-FACTS.md).
#include "graph/forms.hpp"
#include "graph/patterns.hpp"
#include "knowledge/advice_texts.hpp"

namespace npud::graph {

const PatternSpec& layer_norm_pattern() {
  static const PatternSpec spec = [] {
    using namespace forms;
    PatternSpec s;
    Vars v;
    P x = v.var();
    auto centred = [&] { return op({"sub"}, {x, mean_of(x)}); };
    P variance = alt({op({"var"}, {x}), mean_of(square(v, centred()))});
    P denom = plus_eps(variance);
    s.expr = alt({divide(centred(), sqrt_of(denom)), op_c({"mul"}, {centred(), rsqrt_of(v, denom)}),
                  divide(centred(), op_c({"add"}, {op({"std"}, {x}), scalar()}))});
    s.vars = v.count();
    s.rule = "FUSE002";
    s.name = "layer-norm";
    s.title = "LayerNorm written out";
    s.roots = {"div", "mul"};
    s.anchors = {"sqrt", "rsqrt", "std", "var"};
    s.weight_tail = true;
    s.bias_tail = true;
    s.api = "torch.nn.functional.layer_norm";
    s.aten_op = "native_layer_norm";
    s.snippet = advice("FUSE002", "snippet");
    s.notes = {advice("FUSE002", "note")};
    return s;
  }();
  return spec;
}

}  // namespace npud::graph
