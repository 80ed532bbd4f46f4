#include "source/source_rules.hpp"

#include <cctype>
#include <stdexcept>

namespace npud {
namespace {

constexpr SourceRuleInfo kRules[] = {
    {"PARSE001", Severity::Error, false, "Syntax error: the file does not parse; fixes are not applied to it"},
    {"CUDA001", Severity::Error, true, "CUDA device string; use 'npu'"},
    {"CUDA002", Severity::Error, true, ".cuda() moves to a CUDA device; use .npu()"},
    {"CUDA003", Severity::Error, true, "torch.cuda API; use its torch.npu equivalent"},
    {"CUDA004", Severity::Error, true, "NCCL process-group backend; use 'hccl'"},
    {"CUDA005", Severity::Info, true, "torch.backends.cudnn/cuda setting has no effect on the NPU (TF32 -> HF32)"},
    {"CUDA006", Severity::Error, true, "NPU APIs used without `import torch_npu`"},
    {"CUDA007", Severity::Warning, true, "`.is_cuda` gate is False on the NPU; use .is_npu"},
    {"SYNC101", Severity::Warning, false, "Host-device sync inside a loop"},
    {"CONTIG101", Severity::Warning, false, "Transposed/permuted view fed to matmul/linear/conv"},
    {"FUSE101", Severity::Info, false, "Hand-written RMSNorm; torch_npu.npu_rms_norm fuses it"},
    {"FUSE102", Severity::Info, false, "Hand-written rotary embedding; torch_npu.npu_rotary_mul fuses it"},
    {"FUSE103", Severity::Info, false, "Hand-written attention; use F.scaled_dot_product_attention or torch_npu.npu_fusion_attention"},
    {"FUSE104", Severity::Info, false, "Hand-written SwiGLU; torch_npu.npu_swiglu fuses it"},
    {"FUSE105", Severity::Info, false, "Hand-written GELU; use torch_npu.npu_gelu / npu_fast_gelu or F.gelu"},
    {"AMP101", Severity::Warning, false, "fp16 autocast in a training file without GradScaler"},
    {"API101", Severity::Warning, false, "torch API whose aten op has no NPU kernel in the chosen torch_npu"},
    {"API102", Severity::Info, false, "torch API that runs on AI CPU / host on the NPU for some inputs"},
};

}  // namespace

std::span<const SourceRuleInfo> source_rules() { return kRules; }

const SourceRuleInfo* find_source_rule(std::string_view id) {
  for (const auto& r : kRules)
    if (r.id == id) return &r;
  return nullptr;
}

std::vector<RuleRef> source_rule_refs() {
  std::vector<RuleRef> out;
  for (const auto& r : kRules) out.push_back({r.id, {}});
  return out;
}

}  // namespace npud
