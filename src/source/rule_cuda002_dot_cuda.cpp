// CUDA002 dot-cuda: `x.cuda()` moves to a CUDA device; fix: `.npu()`. A file that defines its own
// cuda() keeps its calls (no automatic fix). See docs/rules/CUDA002.md.
#include "knowledge/advice_texts.hpp"
#include "source/cuda_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <string>

namespace npud::cuda_rules {

void report_cuda_call(TSNode n, TSNode attr, FileScan& fs) {
  const auto& f = py::fields();
  TSNode fn = py::field(n, f.function);
  std::string obj = fs.dotted(py::field(fn, f.object));
  if (obj == "torch") return;  // torch.cuda is the module (CUDA003), not a method call
  auto& fd = fs.report("CUDA002", Severity::Error, n,
                       "`.cuda()` moves to a CUDA device, which does not exist on an Ascend NPU",
                       advice("CUDA002", "fix"));
  fd.edits.push_back({ts_node_start_byte(attr), ts_node_end_byte(attr), "npu"});
}

void withhold_own_cuda_fixes(FileScan& fs) {
  // `.cuda()` may be this file's own method: rewriting it would change the program.
  for (auto& f : fs.findings) {
    if (f.rule != "CUDA002") continue;
    f.edits.clear();
    f.fix = advice("CUDA002", "fix_own_cuda");
  }
}

}  // namespace npud::cuda_rules

#endif  // NPUD_HAVE_TREE_SITTER
