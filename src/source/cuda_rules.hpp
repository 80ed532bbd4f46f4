// The CUDA scan rules, one file each (rule_cuda001_device_string.cpp ... rule_cuda007_is_cuda.cpp,
// docs/rules/CUDA00N.md, tests/data/scan/cuda00N.py): what each reports and its fix. One walk
// (rule_cuda.cpp) serves them all and keeps what they share: where a literal's value flows
// (`backend = 'nccl'` ... `init_process_group(backend=backend)`) and the tests that keep NPU
// tensors out of CUDA-only code (cuda_gates.hpp), which withhold the others' fixes.
#pragma once
#ifdef NPUD_HAVE_TREE_SITTER

#include <cstdint>
#include <string_view>

#include "source/rule_context.hpp"

namespace npud::cuda_rules {

// A CUDA device name inside a string literal: exact ("cuda", "cuda:1") or a template that
// builds one (f"cuda:{rank}", "cuda:{}".format(r), "cuda:%d" % r, "cuda:" + str(r)). A
// template can only mean a device; an exact "cuda" needs a device context to be one.
struct CudaLiteral {
  bool found = false;
  bool templ = false;
  uint32_t at = 0;        // byte offset of "cuda"
  std::string_view text;  // the literal's content
};
CudaLiteral cuda_literal(std::string_view src, TSNode n);

// How a literal's value is used: as a device argument, compared against a device, or neither.
enum class Context { None, Argument, Test };

// CUDA001: the device string literal n, used as `c` says.
void report_device_literal(TSNode n, Context c, FileScan& fs);
// CUDA002: `x.cuda(...)`, the call n with its member name node `attr`.
void report_cuda_call(TSNode n, TSNode attr, FileScan& fs);
// CUDA002 in a file that defines its own cuda(): its findings keep no automatic fix.
void withhold_own_cuda_fixes(FileScan& fs);
// CUDA003: torch.cuda.X (the attribute n, its parent p, member X or "") and imports from torch.cuda.
void report_torch_cuda(TSNode n, TSNode p, TSNode attr, std::string_view member, FileScan& fs);
void check_import_from(TSNode n, FileScan& fs);
// CUDA004: the 'nccl' literal n used as a process-group backend.
void report_nccl(TSNode n, FileScan& fs);
// CUDA005: torch.backends.cudnn.X / torch.backends.cuda.X, dotted name d.
void report_backend_setting(TSNode n, std::string_view d, FileScan& fs);
// CUDA006: a file that uses NPU APIs (or will after the CUDA fixes) without `import torch_npu`.
void check_import_torch_npu(FileScan& fs);
// CUDA007: `x.is_cuda`, the attribute n with its name node `attr`.
void report_is_cuda(TSNode n, TSNode attr, FileScan& fs);

}  // namespace npud::cuda_rules

#endif  // NPUD_HAVE_TREE_SITTER
