// FUSE101-FUSE105: hand-written versions of ops torch_npu has fused kernels for. Each written-out
// form runs as several small NPU kernels with intermediate tensors in HBM; the fused API runs
// as one. Source patterns only (the scan has no shapes); the capture-based graph patterns
// confirm them at run time. Model code spreads these ops over statements (`variance = ...`
// then `x * torch.rsqrt(variance + eps)`; `self.act_fn = ACT2FN[...]` in __init__, used in
// forward), so the rules follow simple local dataflow: what a name was assigned in the same
// function, and what a module attribute was assigned anywhere in its class.
// Never suggests NpuLayerNorm or deprecated ops (NPU-FACTS).
//
// This file is the one walk of the FUSE rules (each in rule_fuse10N_*.cpp, fused_rules.hpp): it
// hands each node to the rule it concerns and keeps the helpers they share.
#include "knowledge/advice_texts.hpp"
#include "source/fused_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <memory>
#include <string>
#include <utility>

namespace npud::fused_rules {
namespace {

using py::Kind;

// Hand-written patterns are short expressions: a longer text is never one of them, and
// squeezing the text of every enclosing expression of a long chain would cost its length per
// node (`a0 = a1 = ... = 1`: each assignment's value holds the rest of the chain).
constexpr size_t kPatternTextMax = 4096;

}  // namespace

// The text without whitespace, so "x ** 2" and "x**2" read the same; "" for a text longer
// than kPatternTextMax (callers treat "" as no pattern).
std::string squeeze(std::string_view s) {
  if (s.size() > kPatternTextMax) return {};
  std::string o;
  o.reserve(s.size());
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\\') o += c;
  return o;
}

std::string availability(const FileScan& fs, std::string_view op) {
  if (fs.kv.is_custom(op)) return {};
  return advice("FUSE1XX", "not_listed", {{"torch_npu", fs.kv.version}});
}

// The expression a call works on: first positional argument, or the object of a method.
TSNode subject(TSNode call, bool method) {
  if (method) return py::method_object(call);
  auto args = py::positional_args(call);
  return args.empty() ? TSNode{} : args[0];
}

// ---------------------------------------------------------------------------------------------

namespace {

// torch.X(...) -> (true, false); y.X() -> (true, true).
// `d`: dotted name of the call's function.
std::pair<bool, bool> is_fn(TSNode call, const std::string& d, FileScan& fs, std::string_view torch_name,
                            std::string_view method) {
  if (d == torch_name) return {true, false};
  if (!method.empty() && py::method_name(fs.text, call) == method &&
      !fs.dotted(py::method_object(call)).starts_with("torch"))
    return {true, true};
  return {false, false};
}

class FusedPatterns final : public SourceRule {
 public:
  void visit(TSNode n, Kind k, FileScan& fs) override {
    if (k == Kind::BinaryOperator) return on_binary(n, fs);
    if (k == Kind::Call) return on_call(n, fs);
  }

  void leave(TSNode n, Kind, FileScan& fs) override {
    rms_->on_assignment(n, fs);
    glu_->on_assignment(n, fs);
    attention_->on_assignment(n, fs);
  }

  void finish(FileScan& fs) override { glu_->finish(fs); }

 private:
  std::unique_ptr<RmsNormNames> rms_ = make_rms_norm_names();
  std::unique_ptr<SwigluNames> glu_ = make_swiglu_names();
  std::unique_ptr<AttentionNames> attention_ = make_attention_names();

  void on_binary(TSNode n, FileScan& fs) {
    std::string_view op = py::binary_op(fs.text, n);
    if (op == "*") glu_->on_product(n, fs);
    if ((op == "*" || op == "/") && rms_->is_rms_norm(n, op, fs)) report_rms_norm(n, fs);
  }

  void on_call(TSNode n, FileScan& fs) {
    const std::string& d = fs.call_dotted;
    // FUSE102 rotary: torch.cat((-x2, x1), dim=-1), the body of rotate_half.
    if (d == "torch.cat" || d == "torch.concat" || d == "torch.stack") return check_rotate_half(n, fs);
    // FUSE103 attention: softmax over q @ k^T.
    {
      auto [yes, method] = is_fn(n, d, fs, "torch.nn.functional.softmax", "softmax");
      if (!yes && d == "torch.softmax") yes = true, method = false;
      if (yes) return check_attention(n, method, *attention_, fs);
    }
    // FUSE105 GELU written out: tanh form (0.044715) or erf form (x / sqrt(2)).
    {
      auto [tanh_yes, tanh_m] = is_fn(n, d, fs, "torch.tanh", "tanh");
      auto [erf_yes, erf_m] = is_fn(n, d, fs, "torch.erf", "erf");
      if (!erf_yes && d == "torch.special.erf") erf_yes = true, erf_m = false;
      if (tanh_yes || erf_yes) check_gelu(n, tanh_yes, erf_yes, tanh_yes ? tanh_m : erf_m, fs);
    }
  }
};

}  // namespace

}  // namespace npud::fused_rules

namespace npud {

std::unique_ptr<SourceRule> make_fused_rules() { return std::make_unique<fused_rules::FusedPatterns>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
