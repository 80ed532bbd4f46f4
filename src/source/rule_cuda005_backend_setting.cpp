// CUDA005 cuda-backend-setting: torch.backends.cudnn / torch.backends.cuda settings the NPU does not
// read; the TF32 switches become their HF32 twins. See docs/rules/CUDA005.md.
#include "knowledge/advice_texts.hpp"
#include "source/cuda_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <string>
#include <utility>

namespace npud::cuda_rules {

// torch.backends.cudnn.X / torch.backends.cuda.X (also through `import torch.backends.cudnn
// as cudnn`): no effect on the NPU, except the TF32 switches, which have HF32 twins.
void report_backend_setting(TSNode n, std::string_view d, FileScan& fs) {
  static constexpr std::pair<std::string_view, std::string_view> kHf32[] = {
      {"torch.backends.cuda.matmul.allow_tf32", "torch.npu.matmul.allow_hf32"},
      {"torch.backends.cudnn.allow_tf32", "torch.npu.conv.allow_hf32"},
  };
  for (const auto& [cuda, npu] : kHf32) {
    if (d != cuda) continue;
    auto& fd = fs.report("CUDA005", Severity::Info, n,
                         std::string(d) + " switches TF32 on CUDA; on the NPU the same trade (fp32 matmul/conv "
                                          "in a 19-bit format) is HF32: " + std::string(npu),
                         std::string(npu));
    fd.edits.push_back({ts_node_start_byte(n), ts_node_end_byte(n), std::string(npu)});
    return;
  }
  std::string fix = advice("CUDA005", d.ends_with(".deterministic") ? "fix_deterministic" : "fix");
  bool cudnn = d.starts_with("torch.backends.cudnn");
  fs.report("CUDA005", Severity::Info, n,
            std::string(d) + (cudnn ? " configures cuDNN, which the NPU does not use"
                                    : " configures CUDA's math backends, which the NPU does not use"),
            fix);
}

}  // namespace npud::cuda_rules

#endif  // NPUD_HAVE_TREE_SITTER
