// API101 / API102: calls of torch APIs whose aten ops have no NPU kernel in the chosen
// torch_npu version (they fall back to the CPU, with a copy each way), or that run on AI CPU /
// the host for some inputs even though a kernel is listed (NPU-FACTS). The table is
// data/api-aten-map.tsv, judged against the chosen wheel's op list (findings name it).
#include "knowledge/advice_texts.hpp"
#include "source/rule_context.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include "knowledge/npu_coverage.hpp"

namespace npud {
namespace {

using py::Kind;

class UnsupportedApi final : public SourceRule {
 public:
  void visit(TSNode n, Kind k, FileScan& fs) override {
    if (k != Kind::Call) return;
    const std::string& d = fs.call_dotted;
    if (d.empty() || !d.starts_with("torch.")) return;
    const ApiEntry* e = fs.api.find(d);
    if (!e) return;
    const Knowledge& kb = Knowledge::builtin();
    // scan has no torch that ran: the torch line of the chosen torch_npu wheel
    const size_t column = kb.dispatch().column(fs.kv.torch);
    const std::string caveat = " (op list of " + fs.kv.describe() + ")";
    for (const auto& op : e->ops) {
      if (fs.kv.is_unsupported(op)) {
        fs.report("API101", Severity::Error, n, d + "() dispatches to aten::" + op + ", which raises on the NPU" + caveat,
                  advice("API101", "fix_unsupported"));
        return;
      }
      if (fs.kv.is_tocpu(op) ||
          npu_coverage(fs.kv, op, false, kb.dispatch().kind(op, column, false), kb.dispatch(), column).coverage ==
              Coverage::FallsBack) {
        fs.report("API101", Severity::Warning, n,
                  d + "() dispatches to aten::" + op + ", which has no NPU kernel: it falls back to the CPU with a "
                      "copy each way" + caveat,
                  advice("API101", "fix_falls_back"));
        return;
      }
    }
    if (!e->host_note.empty())
      fs.report("API102", Severity::Info, n, d + "(): " + e->host_note + " (NPU-FACTS)",
                advice("API102", "fix"));
  }
};

}  // namespace

std::unique_ptr<SourceRule> make_api_rules() { return std::make_unique<UnsupportedApi>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
