// CUDA006 missing-import-torch-npu: a file that uses NPU APIs, or will after the CUDA fixes, without
// `import torch_npu`; fix: the import after `import torch`. See docs/rules/CUDA006.md.
#include "knowledge/advice_texts.hpp"
#include "source/cuda_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <string>

namespace npud::cuda_rules {

void check_import_torch_npu(FileScan& fs) {
  bool gets_npu = fs.uses_npu;
  for (const auto& f : fs.findings)
    if (f.fixable() && f.rule.starts_with("CUDA")) gets_npu = true;
  if (!gets_npu || fs.imports_torch_npu) return;
  const char* msg =
      "this file uses NPU APIs (or will, after the CUDA fixes) but does not `import torch_npu`, "
      "which registers the 'npu' device and torch.npu";
  if (!fs.has_import_torch) {
    // No anchor that is safe for an insertion (docstrings, __future__ imports): no edit.
    fs.report("CUDA006", Severity::Error, fs.first_statement, msg, advice("CUDA006", "fix_no_import_torch"));
    return;
  }
  const NodeSpan& imp = fs.import_torch;
  uint32_t end = imp.end_byte;
  uint32_t line_start = imp.start_byte - imp.start.column;
  std::string indent;
  for (uint32_t i = line_start; i < fs.text.size() && (fs.text[i] == ' ' || fs.text[i] == '\t'); ++i)
    indent += fs.text[i];
  size_t nl = fs.text.find('\n', end);
  TextEdit e;
  if (nl == std::string_view::npos) {
    e.start = e.end = fs.text.size();
    e.replacement = std::string(fs.newline) + indent + "import torch_npu" + std::string(fs.newline);
  } else {
    e.start = e.end = nl + 1;
    e.replacement = indent + "import torch_npu" + std::string(fs.newline);
  }
  fs.report("CUDA006", Severity::Error, imp, msg, advice("CUDA006", "fix")).edits.push_back(std::move(e));
}

}  // namespace npud::cuda_rules

#endif  // NPUD_HAVE_TREE_SITTER
