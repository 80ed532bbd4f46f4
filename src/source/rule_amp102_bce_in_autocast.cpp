// AMP102: nn.BCELoss / F.binary_cross_entropy called inside an autocast block. CUDA's and
// torch_npu's autocast ban binary_cross_entropy (it raises "unsafe to autocast"); CPU autocast
// runs it, so a CPU test of the same file passes. See docs/rules/AMP102.md.
#include <set>
#include <string>
#include <vector>

#include "knowledge/advice_texts.hpp"
#include "source/rule_context.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

namespace npud {
namespace {

using py::Kind;

// The body of the `with` statement whose item is `call`, or a null node.
TSNode with_body(TSNode call) {
  TSNode n = ts_node_parent(call);
  for (int up = 0; up < 3 && !ts_node_is_null(n); ++up, n = ts_node_parent(n))
    if (std::string_view(ts_node_type(n)) == "with_statement") return py::field(n, py::fields().body);
  return TSNode{};
}

bool is_bce_constructor(std::string_view dotted) {
  return dotted == "BCELoss" || dotted.ends_with(".BCELoss");
}

bool is_bce_function(std::string_view dotted) {
  return dotted == "binary_cross_entropy" || dotted.ends_with(".binary_cross_entropy");
}

class BceInAutocast final : public SourceRule {
 public:
  void visit(TSNode n, Kind k, FileScan& fs) override {
    if (k == Kind::Assignment) {
      // criterion = nn.BCELoss() / self.criterion = torch.nn.BCELoss(reduction="sum")
      const auto& f = py::fields();
      TSNode right = py::field(n, f.right);
      if (!ts_node_is_null(right) && py::kind(right) == Kind::Call && is_bce_constructor(fs.call_dotted_of(right)))
        losses_.insert(std::string(fs.text_of(py::field(n, f.left))));
      return;
    }
    if (k != Kind::Call) return;
    const std::string& d = fs.call_dotted;
    if (autocast_call(n, d, fs)) {
      TSNode body = with_body(n);
      if (!ts_node_is_null(body)) regions_.push_back({ts_node_start_byte(body), ts_node_end_byte(body)});
      return;
    }
    bool bce = is_bce_function(d) || losses_.contains(d);
    TSNode fn = py::field(n, py::fields().function);
    if (!bce && py::kind(fn) == Kind::Call) bce = is_bce_constructor(fs.call_dotted_of(fn));  // nn.BCELoss()(p, y)
    if (!bce || !inside_autocast(ts_node_start_byte(n))) return;
    fs.report("AMP102", Severity::Error, n,
              "`" + std::string(fs.text_of(fn)) + "` (binary cross-entropy) inside autocast: the NPU's autocast, like "
              "CUDA's, bans it and the call raises (\"unsafe to autocast\"); CPU autocast runs it, so a CPU test passes",
              advice("AMP006", "fix_bce"));
  }

 private:
  struct Region { uint32_t begin, end; };
  std::vector<Region> regions_;     // bodies of the autocast `with` blocks seen so far
  std::set<std::string, std::less<>> losses_;   // names bound to an nn.BCELoss

  bool inside_autocast(uint32_t at) const {
    for (const Region& r : regions_)
      if (at >= r.begin && at < r.end) return true;
    return false;
  }

  // An autocast that is on and not the CPU's: torch.autocast("npu"|"cuda"|device_type),
  // torch.cuda/npu.amp.autocast(), accelerator.autocast(); not enabled=False, not "cpu".
  static bool autocast_call(TSNode n, std::string_view d, FileScan& fs) {
    if (!(d == "autocast" || d.ends_with(".autocast"))) return false;
    if (d == "torch.cpu.amp.autocast") return false;
    TSNode enabled = py::keyword_arg(fs.text, n, "enabled");
    if (!ts_node_is_null(enabled) && fs.text_of(enabled) == "False") return false;
    TSNode dev = py::keyword_arg(fs.text, n, "device_type");
    if (ts_node_is_null(dev) && (d == "torch.autocast" || d == "torch.amp.autocast")) {
      auto args = py::positional_args(n);
      if (!args.empty()) dev = args[0];
    }
    return ts_node_is_null(dev) || fs.text_of(dev).find("cpu") == std::string_view::npos;
  }
};

}  // namespace

std::unique_ptr<SourceRule> make_bce_in_autocast_rule() { return std::make_unique<BceInAutocast>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
