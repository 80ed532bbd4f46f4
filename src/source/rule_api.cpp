// API101 / API102: calls of torch APIs whose aten ops have no NPU kernel in the chosen
// torch_npu version (they fall back to the CPU, with a copy each way), or that run on AI CPU /
// the host for some inputs even though a kernel is listed (NPU-FACTS). The table is
// data/api-aten-map.tsv, judged against the chosen wheel's op list (findings name it).
// This file is the one walk of both rules (rule_api101_no_npu_kernel.cpp,
// rule_api102_ai_cpu.cpp, api_rules.hpp).
#include "source/api_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <memory>
#include <string>

namespace npud::api_rules {
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
    if (report_unsupported_api(n, d, e, fs)) return;
    report_host_api(n, d, e, fs);
  }
};

}  // namespace
}  // namespace npud::api_rules

namespace npud {

std::unique_ptr<SourceRule> make_api_rules() { return std::make_unique<api_rules::UnsupportedApi>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
