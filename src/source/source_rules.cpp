#include "source/source_rules.hpp"

#include <cctype>
#include <stdexcept>

namespace npud {
namespace {

// id, name (none: scan rules go by id), summary, default severity, fixable.
constexpr RuleInfo kRules[] = {
    {"PARSE001", "", "Syntax error: the file does not parse; fixes are not applied to it", Severity::Error, false},
    {"CUDA001", "", "CUDA device string; use 'npu'", Severity::Error, true},
    {"CUDA002", "", ".cuda() moves to a CUDA device; use .npu()", Severity::Error, true},
    {"CUDA003", "", "torch.cuda API; use its torch.npu equivalent", Severity::Error, true},
    {"CUDA004", "", "NCCL process-group backend; use 'hccl'", Severity::Error, true},
    {"CUDA005", "", "torch.backends.cudnn/cuda setting has no effect on the NPU (TF32 -> HF32)", Severity::Info, true},
    {"CUDA006", "", "NPU APIs used without `import torch_npu`", Severity::Error, true},
    {"CUDA007", "", "`.is_cuda` gate is False on the NPU; use .is_npu", Severity::Warning, true},
    {"SYNC101", "", "Host-device sync inside a loop", Severity::Warning, false},
    {"CONTIG101", "", "Transposed/permuted view fed to matmul/linear/conv", Severity::Warning, false},
    {"FUSE101", "", "Hand-written RMSNorm; torch_npu.npu_rms_norm fuses it", Severity::Info, false},
    {"FUSE102", "", "Hand-written rotary embedding; torch_npu.npu_rotary_mul fuses it", Severity::Info, false},
    {"FUSE103", "", "Hand-written attention; use F.scaled_dot_product_attention or torch_npu.npu_fusion_attention", Severity::Info, false},
    {"FUSE104", "", "Hand-written SwiGLU; torch_npu.npu_swiglu fuses it", Severity::Info, false},
    {"FUSE105", "", "Hand-written GELU; use torch_npu.npu_gelu / npu_fast_gelu or F.gelu", Severity::Info, false},
    {"AMP101", "", "fp16 autocast in a training file without GradScaler", Severity::Warning, false},
    {"AMP102", "", "nn.BCELoss / F.binary_cross_entropy inside autocast: raises on the NPU", Severity::Error, false},
    {"API101", "", "torch API whose aten op has no NPU kernel in the chosen torch_npu", Severity::Warning, false},
    {"API102", "", "torch API that runs on AI CPU / host on the NPU for some inputs", Severity::Info, false},
};

}  // namespace

std::span<const RuleInfo> source_rules() { return kRules; }

const RuleInfo* find_source_rule(std::string_view id) {
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
