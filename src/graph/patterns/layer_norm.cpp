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
    // F.layer_norm(x, shape, weight, bias, eps): weight and bias are what the code scales by and
    // adds (None where it does neither); the std-plus-eps form has no equal (differs_for).
    s.fix_for = [](const NormForm& f) {
      using W = NormForm::Weight;
      return advice("FUSE002", "snippet",
                    {{"comment", f.weight == W::Offset ? advice("FUSE00X", "offset_weight_comment") : std::string()},
                     {"weight", f.weight == W::Offset ? "1.0 + self.weight" : f.weight == W::None ? "None" : "self.weight"},
                     {"bias", f.bias ? "self.bias" : "None"},
                     {"module_line", f.weight == W::Plain && f.bias ? advice("FUSE002", "module_line") : std::string()}});
    };
    s.differs_for = [](const NormForm& f) { return f.std_plus_eps ? advice("FUSE002", "std_plus_eps") : std::string(); };
    s.snippet = s.fix_for({.bias = true});
    s.notes = {advice("FUSE002", "note")};
    return s;
  }();
  return spec;
}

}  // namespace npud::graph
