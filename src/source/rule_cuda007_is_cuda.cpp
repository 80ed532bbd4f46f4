// CUDA007 is-cuda-test: `x.is_cuda` is False for NPU tensors; fix: `.is_npu`. See docs/rules/CUDA007.md.
#include "knowledge/advice_texts.hpp"
#include "source/cuda_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <string>

namespace npud::cuda_rules {

void report_is_cuda(TSNode n, TSNode attr, FileScan& fs) {
  auto& fd = fs.report("CUDA007", Severity::Warning, n,
                       "`" + std::string(fs.text_of(n)) + "` is False for a tensor on the NPU, so the code "
                           "it gates silently takes the non-CUDA path",
                       advice("CUDA007", "fix_is_cuda"));
  fd.edits.push_back({ts_node_start_byte(attr), ts_node_end_byte(attr), "is_npu"});
}

}  // namespace npud::cuda_rules

#endif  // NPUD_HAVE_TREE_SITTER
