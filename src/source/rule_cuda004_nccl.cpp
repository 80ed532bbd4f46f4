// CUDA004 nccl-backend: the process-group backend 'nccl' (also stored in a name that reaches
// init_process_group / new_group); fix: 'hccl'. See docs/rules/CUDA004.md.
#include "knowledge/advice_texts.hpp"
#include "source/cuda_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

namespace npud::cuda_rules {

void report_nccl(TSNode n, FileScan& fs) {
  auto& fd = fs.report("CUDA004", Severity::Error, n,
                       "process-group backend 'nccl' is CUDA-only; Ascend collectives use HCCL", advice("CUDA004", "fix"));
  uint32_t cs = py::string_content_start(fs.text, n);
  fd.edits.push_back({cs, cs + 4, "hccl"});
}

}  // namespace npud::cuda_rules

#endif  // NPUD_HAVE_TREE_SITTER
