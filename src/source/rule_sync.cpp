// SYNC101: host-device synchronisation inside a loop (.item(), .cpu(), .numpy(), .tolist(),
// print(tensor), float/int/bool(tensor)). Each one stalls the host until the NPU has finished
// all queued work, every iteration, so the device idles while Python catches up.
#include "knowledge/advice_texts.hpp"
#include "source/rule_context.hpp"
#include "util/text.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <utility>
#include <cctype>

namespace npud {
namespace {

using py::Kind;

constexpr std::array<std::string_view, 4> kSyncMethods = {"item", "cpu", "numpy", "tolist"};
// Methods whose result is a tensor, so print()/float() of it syncs.
constexpr std::array<std::string_view, 18> kTensorMethods = {
    "sum", "mean", "max", "min", "norm", "std", "var", "abs", "argmax", "argmin",
    "detach", "float", "double", "half", "squeeze", "clone", "sqrt", "exp"};
// Names that usually hold tensors in training code (a heuristic: the scan has no types).
constexpr std::array<std::string_view, 10> kTensorWords = {
    "loss", "logit", "output", "pred", "grad", "norm", "acc", "tensor", "score", "prob"};
// Functions whose loops are the hot path; module-level loops (scripts) count too.
constexpr std::array<std::string_view, 9> kHotFunctionWords = {
    "train", "step", "fit", "epoch", "eval", "valid", "loop", "run", "main"};


bool has_word(std::string_view s, const auto& words) {
  std::string l = to_lower(s);
  return std::any_of(words.begin(), words.end(), [&](std::string_view w) { return l.find(w) != std::string::npos; });
}

class SyncInLoop final : public SourceRule {
 public:
  void visit(TSNode n, Kind k, FileScan& fs) override {
    if (k == Kind::Assignment) note_assignment(n, fs);
    if (k != Kind::Call || fs.loop_depth == 0) return;
    const auto& f = py::fields();
    TSNode fn = py::field(n, f.function);
    Kind fk = py::kind(fn);
    if (fk == Kind::Attribute) {
      std::string_view m = fs.text_of(py::field(fn, f.attribute));
      if (std::find(kSyncMethods.begin(), kSyncMethods.end(), m) == kSyncMethods.end()) return;
      if (m != "numpy" && !py::positional_args(n).empty()) return;  // .item(x) etc.: not a tensor method
      std::string obj = fs.dotted(py::field(fn, f.object));
      if (obj == "torch" || obj.starts_with("np") || obj.starts_with("numpy")) return;
      fs.report("SYNC101", Severity::Warning, n,
                "`." + std::string(m) + "()` inside a loop copies to the host and waits for the NPU every iteration",
                advice("SYNC101", m == "item" ? "fix_item" : "fix"));
      return;
    }
    if (fk != Kind::Identifier) return;
    std::string_view name = fs.text_of(fn);
    if (name != "print" && name != "float" && name != "int" && name != "bool") return;
    if (!fs.function_name().empty() && !has_word(fs.function_name(), kHotFunctionWords)) return;
    auto args = py::positional_args(n);
    if (name != "print" && args.size() != 1) return;
    for (TSNode a : args) {
      if (!tensorish(a, fs)) continue;
      fs.report("SYNC101", Severity::Warning, n,
                "`" + std::string(name) + "(" + std::string(fs.text_of(a)) +
                    ")` inside a loop converts a tensor on the host, waiting for the NPU every iteration",
                advice("SYNC101", "fix_convert"));
      return;
    }
  }

 private:
  // Names that hold host values in their function (`lossf = loss.item()`): formatting or
  // printing them later is not a sync, whatever they are called.
  std::set<std::pair<int, std::string>, std::less<>> host_names_;
  mutable int depth_ = 0;  // of host_value(): `a * b * ...` may be 100,000 deep

  void note_assignment(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    TSNode left = py::field(n, f.left), right = py::field(n, f.right);
    if (py::kind(left) != Kind::Identifier || ts_node_is_null(right)) return;
    std::pair<int, std::string> key{fs.scope_id, std::string(fs.text_of(left))};
    if (host_value(right, fs)) host_names_.insert(std::move(key));
    else host_names_.erase(key);
  }

  // Is e a Python number/string/list made on the host (what .item()/.tolist()/float() return)?
  bool host_value(TSNode e, FileScan& fs) const {
    const auto& f = py::fields();
    DepthGuard guard(depth_);
    if (guard.too_deep()) return false;
    std::string_view type = ts_node_type(e);
    if (type == "integer" || type == "float" || py::kind(e) == Kind::String) return true;
    switch (py::kind(e)) {
      case Kind::Parenthesized: return ts_node_named_child_count(e) == 1 && host_value(ts_node_named_child(e, 0), fs);
      case Kind::UnaryOperator: return host_value(py::field(e, f.argument), fs);
      case Kind::BinaryOperator: return host_value(py::field(e, f.left), fs) || host_value(py::field(e, f.right), fs);
      case Kind::Identifier: return host_names_.contains(std::pair<int, std::string>{fs.scope_id, std::string(fs.text_of(e))});
      case Kind::Call: {
        TSNode fn = py::field(e, f.function);
        if (py::kind(fn) == Kind::Attribute) {
          std::string_view m = fs.text_of(py::field(fn, f.attribute));
          // .cpu()/.numpy() copies are host tensors and arrays: the copy was the wait (reported
          // there), printing them later waits for nothing (issue 45); so is what they compute.
          if (m == "item" || m == "tolist" || m == "cpu" || m == "numpy") return true;
          if (std::find(kTensorMethods.begin(), kTensorMethods.end(), m) != kTensorMethods.end() &&
              host_value(py::field(fn, f.object), fs))
            return true;
          std::string d = fs.dotted(fn);
          return d.starts_with("time.") || d.starts_with("math.");
        }
        std::string_view name = fs.text_of(fn);
        return name == "float" || name == "int" || name == "len" || name == "round" || name == "bool" || name == "str";
      }
      default: return false;
    }
  }

  // Python's sum/max/min/abs of tensors is a tensor: the grad-norm log line
  // `float(sum(p.grad.norm() for p in model.parameters()))` (issue 40) reads one on the host.
  bool reduces_tensors(TSNode call, std::string_view name, FileScan& fs) const {
    if (name != "sum" && name != "max" && name != "min" && name != "abs") return false;
    TSNode args = py::field(call, py::fields().arguments);
    if (py::kind(args) == Kind::Comprehension) return tensorish(args, fs);   // sum(x for x in xs)
    auto positional = py::positional_args(call);
    return !positional.empty() && tensorish(positional[0], fs);
  }

  bool tensorish(TSNode e, FileScan& fs) const {
    const auto& f = py::fields();
    DepthGuard guard(depth_);  // x[0][0]... and f-strings inside f-strings
    if (guard.too_deep()) return false;
    switch (py::kind(e)) {
      case Kind::Call: {
        TSNode fn = py::field(e, f.function);
        if (py::kind(fn) == Kind::Identifier) return reduces_tensors(e, fs.text_of(fn), fs);
        if (py::kind(fn) != Kind::Attribute) return false;
        std::string_view m = fs.text_of(py::field(fn, f.attribute));
        if (std::find(kTensorMethods.begin(), kTensorMethods.end(), m) == kTensorMethods.end()) return false;
        std::string obj = fs.dotted(py::field(fn, f.object));
        return !(obj.starts_with("np") || obj.starts_with("math") || obj == "torch") && !host_value(e, fs);
      }
      case Kind::Identifier: return has_word(fs.text_of(e), kTensorWords) && !host_value(e, fs);
      case Kind::Attribute: return has_word(fs.text_of(py::field(e, f.attribute)), kTensorWords);
      case Kind::Subscript: return tensorish(py::field(e, f.value), fs);
      // [p.grad.norm() for p in params], (t.sum() for t in ts): tensors, one per element
      case Kind::Comprehension: return ts_node_named_child_count(e) > 0 && tensorish(ts_node_named_child(e, 0), fs);
      case Kind::Parenthesized: return ts_node_named_child_count(e) == 1 && tensorish(ts_node_named_child(e, 0), fs);
      case Kind::String: {
        // f"loss {loss}": the interpolated expressions.
        uint32_t cnt = ts_node_named_child_count(e);
        for (uint32_t i = 0; i < cnt; ++i) {
          TSNode c = ts_node_named_child(e, i);
          if (py::kind(c) == Kind::Interpolation && ts_node_named_child_count(c) > 0 &&
              tensorish(ts_node_named_child(c, 0), fs))
            return true;
        }
        return false;
      }
      default: return false;
    }
  }
};

}  // namespace

std::unique_ptr<SourceRule> make_sync_rule() { return std::make_unique<SyncInLoop>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
