// RMSNorm: x * rsqrt(mean(x^2) + eps) [* weight], however the user wrote it:
//   llama:  x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w
//   T5:     v = x.to(float32).pow(2).mean(-1, keepdim=True); w * (x * torch.rsqrt(v + eps)).to(dtype)
//   plain:  x / torch.sqrt((x * x).sum(-1, keepdim=True) / d + eps)
//   also 1 / torch.sqrt(...), reciprocal(sqrt(...)), no eps.
#include "graph/forms.hpp"
#include "graph/patterns.hpp"
#include "knowledge/advice_texts.hpp"

namespace npud::graph {

const PatternSpec& rms_norm_pattern() {
  static const PatternSpec spec = [] {
    using namespace forms;
    PatternSpec s;
    Vars v;
    P x = v.var();
    P ms = plus_eps(mean_of(square(v, x)));
    s.expr = alt({op_c({"mul"}, {x, rsqrt_of(v, ms)}), op({"div"}, {x, sqrt_of(ms)})});
    s.vars = v.count();
    s.rule = "FUSE001";
    s.name = "rms-norm";
    s.title = "RMSNorm";
    s.roots = {"mul", "div"};
    s.anchors = {"rsqrt", "sqrt", "reciprocal"};
    s.weight_tail = true;
    s.yields_to = {"layer-norm"};
    s.api = "torch_npu.npu_rms_norm";
    s.custom_op = "npu_rms_norm";
    // npu_rms_norm(x, gamma) = x * rsqrt(mean(x^2) + eps) * gamma: gamma is what the code
    // multiplies by (a bias tail is not part of this pattern).
    s.fix_for = [](const NormForm& f) {
      using W = NormForm::Weight;
      return advice("FUSE001", "snippet",
                    {{"comment", f.weight == W::Offset ? advice("FUSE00X", "offset_weight_comment")
                                 : f.weight == W::None ? advice("FUSE001", "no_weight_comment")
                                                       : std::string()},
                     {"weight", f.weight == W::Offset ? "1.0 + self.weight"
                                : f.weight == W::None ? "torch.ones(x.shape[-1], dtype=x.dtype, device=x.device)"
                                                      : "self.weight"}});
    };
    s.snippet = s.fix_for({});
    s.notes = {advice("FUSE001", "note")};
    return s;
  }();
  return spec;
}

}  // namespace npud::graph
