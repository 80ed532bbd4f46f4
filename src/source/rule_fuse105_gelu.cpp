// FUSE105 hand-written-gelu: GELU written out, tanh form (0.044715) or erf form (x / sqrt(2));
// fix: torch_npu.npu_gelu / npu_fast_gelu or F.gelu. See docs/rules/FUSE105.md.
#include "knowledge/advice_texts.hpp"
#include "source/fused_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <string>

namespace npud::fused_rules {

void check_gelu(TSNode n, bool tanh_yes, bool erf_yes, bool method, FileScan& fs) {
  TSNode s = subject(n, method);
  if (ts_node_is_null(s)) return;
  std::string t = squeeze(fs.text_of(s));
  bool tanh_gelu = tanh_yes && has(t, "0.044715");
  bool erf_gelu = erf_yes && (has(t, "sqrt(2") || has(t, "1.41421") || has(t, "0.70710") || has(t, "SQRT1_2"));
  if (tanh_gelu || erf_gelu)
    fs.report("FUSE105", Severity::Info, n,
              std::string("hand-written GELU (") + (tanh_gelu ? "tanh" : "erf") +
                  " form) runs as several elementwise NPU kernels",
              advice("FUSE105", tanh_gelu ? "fix_tanh" : "fix_erf",
                     {{"availability", availability(fs, "npu_gelu")}}));
}

}  // namespace npud::fused_rules

#endif  // NPUD_HAVE_TREE_SITTER
