// API101 api-without-npu-kernel: a call of a torch API whose aten op has no NPU kernel in the
// chosen torch_npu version (it falls back to the CPU, with a copy each way), or is registered to
// raise; the findings name the chosen wheel's op list. See docs/rules/API101.md.
#include "knowledge/advice_texts.hpp"
#include "source/api_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include "knowledge/npu_coverage.hpp"

namespace npud::api_rules {

bool report_unsupported_api(TSNode n, const std::string& d, const ApiEntry* e, FileScan& fs) {
  const Knowledge& kb = Knowledge::builtin();
  // scan has no torch that ran: the torch line of the chosen torch_npu wheel
  const size_t column = kb.dispatch().column(fs.kv.torch);
  const std::string caveat = " (op list of " + fs.kv.describe() + ")";
  for (const auto& op : e->ops) {
    if (fs.kv.is_unsupported(op)) {
      fs.report("API101", Severity::Error, n, d + "() dispatches to aten::" + op + ", which raises on the NPU" + caveat,
                advice("API101", "fix_unsupported"));
      return true;
    }
    if (fs.kv.is_tocpu(op) ||
        npu_coverage(fs.kv, op, false, kb.dispatch().kind(op, column, false), kb.dispatch(), column).coverage ==
            Coverage::FallsBack) {
      fs.report("API101", Severity::Warning, n,
                d + "() dispatches to aten::" + op + ", which has no NPU kernel: it falls back to the CPU with a "
                    "copy each way" + caveat,
                advice("API101", "fix_falls_back"));
      return true;
    }
  }
  return false;
}

}  // namespace npud::api_rules

#endif  // NPUD_HAVE_TREE_SITTER
