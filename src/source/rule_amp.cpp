// AMP101: fp16 autocast in a file that trains (calls .backward()) but never uses a GradScaler.
// fp16 gradients underflow (below 2^-24 they become 0) without loss scaling; on the NPU the
// GradScaler is torch.npu.amp.GradScaler (or torch.amp.GradScaler('npu')).
#include "knowledge/advice_texts.hpp"
#include "source/rule_context.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

namespace npud {
namespace {

using py::Kind;

class AutocastWithoutScaler final : public SourceRule {
 public:
  void visit(TSNode n, Kind k, FileScan& fs) override {
    const auto& f = py::fields();
    if (k == Kind::Identifier) {
      std::string_view t = fs.text_of(n);
      if (t == "GradScaler" || t == "ShardedGradScaler") has_scaler_ = true;
      return;
    }
    if (k == Kind::Attribute) {
      std::string_view m = fs.text_of(py::field(n, f.attribute));
      if (m == "backward") has_backward_ = true;
      // scaler.scale(loss): a scaler made elsewhere and passed in.
      if (m == "scale" && fs.text_of(py::field(n, f.object)).find("scaler") != std::string_view::npos)
        has_scaler_ = true;
      return;
    }
    if (k != Kind::Call || found_) return;
    const std::string& d = fs.call_dotted;
    if (!(d.ends_with(".autocast") && d.starts_with("torch.")) && d != "autocast") return;
    if (d == "torch.cpu.amp.autocast") return;  // bf16 by default
    TSNode enabled = py::keyword_arg(fs.text, n, "enabled");
    if (!ts_node_is_null(enabled) && fs.text_of(enabled) == "False") return;
    TSNode dtype = py::keyword_arg(fs.text, n, "dtype");
    if (!ts_node_is_null(dtype)) {
      std::string_view t = fs.text_of(dtype);
      if (t.find("bfloat16") != std::string_view::npos) return;
      if (t.find("float16") == std::string_view::npos && t.find("half") == std::string_view::npos) return;
    } else if (d != "torch.cuda.amp.autocast" && d != "torch.npu.amp.autocast" && d != "autocast") {
      // torch.autocast / torch.amp.autocast: fp16 is the default for cuda/npu, bf16 for cpu.
      TSNode dev = py::keyword_arg(fs.text, n, "device_type");
      if (ts_node_is_null(dev)) {
        auto args = py::positional_args(n);
        if (!args.empty()) dev = args[0];
      }
      if (!ts_node_is_null(dev) && fs.text_of(dev).find("cpu") != std::string_view::npos) return;
    }
    found_ = true;
    at_ = NodeSpan::of(n);
  }

  void finish(FileScan& fs) override {
    if (!found_ || has_scaler_ || !has_backward_) return;
    fs.report("AMP101", Severity::Warning, at_,
              "fp16 autocast in a training file without a GradScaler: small fp16 gradients underflow to zero",
              advice("AMP101", "fix"));
  }

 private:
  bool found_ = false, has_scaler_ = false, has_backward_ = false;
  NodeSpan at_;  // the autocast; its tree may be gone at finish()
};

}  // namespace

std::unique_ptr<SourceRule> make_amp_rule() { return std::make_unique<AutocastWithoutScaler>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
