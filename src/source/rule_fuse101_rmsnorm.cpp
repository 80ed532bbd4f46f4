// FUSE101 hand-written-rmsnorm: x * rsqrt(mean(x^2) + eps), x / sqrt(...), x / (x.norm(2) /
// sqrt(d)), through the names a function assigns on the way; fix: torch_npu.npu_rms_norm. See
// docs/rules/FUSE101.md.
#include "knowledge/advice_texts.hpp"
#include "source/fused_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <string>
#include <utility>
#include <vector>

namespace npud::fused_rules {
namespace {

using py::Kind;

// What a value is on the way to an RMSNorm. `base` is the normalised tensor's text.
enum class Rms { None, Plain, Square, MeanSquare, Norm2, RootMean, InvRoot, Centered };
struct RmsValue {
  Rms kind = Rms::None;
  std::string base;
};

// Methods that give the same values in another dtype, layout or shape: x.float() is still x.
bool same_values(std::string_view m) {
  return m == "to" || m == "float" || m == "half" || m == "bfloat16" || m == "double" || m == "type" ||
         m == "type_as" || m == "contiguous" || m == "unsqueeze";
}

bool is_number(std::string_view src, TSNode e, std::string_view want) {
  e = py::strip_parens(e);
  std::string t = squeeze(py::text_of(src, e));
  if (want == "2") return t == "2" || t == "2.0";
  if (want == "0.5") return t == "0.5" || t == ".5";
  if (want == "-0.5") return t == "-0.5" || t == "-.5";
  if (want == "1") return t == "1" || t == "1.0" || t == "1.";
  return false;
}

class RmsFlow final : public RmsNormNames {
 public:
  void on_assignment(TSNode n, FileScan& fs) override {
    for (auto [name, value] : fs.names_bound(n)) {
      RmsValue v = ts_node_is_null(value) ? RmsValue{} : classify(value, fs);
      // A plain name stands for itself; only an alias (h = x.float()) or a step is kept.
      if (v.kind == Rms::None || (v.kind == Rms::Plain && v.base == name)) names_.erase(fs, name);
      else names_.set(fs, name, std::move(v));
    }
  }

  // x * ... * rsqrt(mean(x^2) + eps) (reported at the outermost `*` of the chain), or
  // x / sqrt(mean(x^2) + eps).
  bool is_rms_norm(TSNode n, std::string_view op, FileScan& fs) override {
    if (op == "*") {
      if (inside_product(n, fs)) return false;
      std::vector<TSNode> fac;
      factors(n, fs, fac);
      for (TSNode inv : fac) {
        RmsValue r = classify(inv, fs);
        if (r.kind == Rms::InvRoot && scales(fac, inv, r.base, fs)) return true;
      }
      return false;
    }
    if (op != "/") return false;
    RmsValue r = classify(py::field(n, py::fields().right), fs);
    if (r.kind != Rms::RootMean) return false;
    std::vector<TSNode> fac;
    factors(py::field(n, py::fields().left), fs, fac);
    return scales(fac, TSNode{}, r.base, fs);
  }

 private:
  LocalNames<RmsValue> names_;
  int depth_ = 0;  // of factors()

  bool inside_product(TSNode n, FileScan& fs) {
    TSNode p = fs.parent(n);
    while (py::kind(p) == Kind::Parenthesized) p = fs.parent(p);
    return py::kind(p) == Kind::BinaryOperator && py::binary_op(fs.text, p) == "*";
  }

  // The factors of a product, through parentheses: a * (b * c) -> a, b, c.
  void factors(TSNode e, FileScan& fs, std::vector<TSNode>& out) {
    DepthGuard guard(depth_);
    e = py::strip_parens(e);
    if (py::kind(e) == Kind::BinaryOperator && py::binary_op(fs.text, e) == "*" && !guard.too_deep()) {
      factors(py::field(e, py::fields().left), fs, out);
      factors(py::field(e, py::fields().right), fs, out);
      return;
    }
    out.push_back(e);
  }

  // Is one of the factors (other than `skip`) the tensor `base` itself?
  bool scales(const std::vector<TSNode>& fac, TSNode skip, const std::string& base, FileScan& fs) {
    for (TSNode x : fac) {
      if (!ts_node_is_null(skip) && ts_node_eq(x, skip)) continue;
      RmsValue v = classify(x, fs);
      if (v.kind == Rms::Plain && v.base == base) return true;
    }
    return false;
  }

  RmsValue classify(TSNode e, FileScan& fs, int depth = 0) {
    e = py::strip_parens(e);
    if (depth > 24) return {};
    switch (py::kind(e)) {
      case Kind::Identifier: {
        const RmsValue* v = names_.find(fs, fs.text_of(e));
        return v ? *v : RmsValue{Rms::Plain, std::string(fs.text_of(e))};
      }
      case Kind::Attribute: {
        std::string base = squeeze(fs.text_of(e));
        return base.empty() ? RmsValue{} : RmsValue{Rms::Plain, std::move(base)};
      }
      case Kind::BinaryOperator: return classify_binary(e, fs, depth);
      case Kind::Call: return classify_call(e, fs, depth);
      default: return {};
    }
  }

  // `of` squared: its base, unless it is centred (x - mean: LayerNorm, not RMSNorm).
  RmsValue square_of(TSNode of, FileScan& fs, int depth) {
    RmsValue v = classify(of, fs, depth + 1);
    return v.kind == Rms::Plain ? RmsValue{Rms::Square, v.base} : RmsValue{};
  }

  // After a mean of squares: sqrt -> RootMean, rsqrt -> InvRoot (eps added or not).
  static RmsValue root(const RmsValue& v, bool inverse) {
    if (v.kind != Rms::MeanSquare) return {};
    return {inverse ? Rms::InvRoot : Rms::RootMean, v.base};
  }

  RmsValue classify_binary(TSNode e, FileScan& fs, int depth) {
    const auto& f = py::fields();
    std::string_view op = py::binary_op(fs.text, e);
    TSNode l = py::field(e, f.left), r = py::field(e, f.right);
    if (op == "-") return {Rms::Centered, {}};
    if (op == "**") {
      if (is_number(fs.text, r, "2")) return square_of(l, fs, depth);
      RmsValue v = classify(l, fs, depth + 1);
      if (is_number(fs.text, r, "-0.5")) return root(v, true);
      if (is_number(fs.text, r, "0.5")) return root(v, false);
      return {};
    }
    RmsValue a = classify(l, fs, depth + 1), b = classify(r, fs, depth + 1);
    if (op == "+") {  // + eps
      for (const RmsValue* v : {&a, &b})
        if (v->kind == Rms::MeanSquare || v->kind == Rms::RootMean) return *v;
      return {};
    }
    if (op == "*") {
      if (a.kind == Rms::Plain && b.kind == Rms::Plain && a.base == b.base) return {Rms::Square, a.base};
      if (a.kind == Rms::Norm2) return {Rms::RootMean, a.base};  // x.norm(2) * d ** -0.5
      return {};
    }
    if (op == "/") {
      if (a.kind == Rms::Norm2) return {Rms::RootMean, a.base};  // x.norm(2) / sqrt(d)
      if (is_number(fs.text, l, "1") && b.kind == Rms::RootMean) return {Rms::InvRoot, b.base};
    }
    return {};
  }

  // The calls an RMSNorm is made of, as methods (x.pow(2)) or torch functions (torch.pow(x, 2)).
  static bool rms_step(std::string_view m) {
    return same_values(m) || m == "square" || m == "pow" || m == "mean" || m == "add" || m == "rsqrt" ||
           m == "sqrt" || m == "reciprocal" || m == "norm" || m == "vector_norm";
  }

  RmsValue classify_call(TSNode e, FileScan& fs, int depth) {
    std::string_view m = py::method_name(fs.text, e);
    if (!rms_step(m)) return {};
    bool method = !fs.dotted(py::method_object(e)).starts_with("torch");  // torch.pow, torch.linalg.norm
    TSNode of = subject(e, method);
    if (ts_node_is_null(of)) return {};
    auto args = py::positional_args(e);
    size_t exponent_at = method ? 0 : 1;
    if (method && same_values(m)) return classify(of, fs, depth + 1);
    if (m == "square") return square_of(of, fs, depth);
    if (m == "pow" && args.size() > exponent_at) {
      TSNode p = args[exponent_at];
      if (is_number(fs.text, p, "2")) return square_of(of, fs, depth);
      if (is_number(fs.text, p, "-0.5")) return root(classify(of, fs, depth + 1), true);
      if (is_number(fs.text, p, "0.5")) return root(classify(of, fs, depth + 1), false);
      return {};
    }
    RmsValue v = classify(of, fs, depth + 1);
    // A mean of a mean of squares is one too (timm takes it again over its dims in a branch).
    if (m == "mean") return v.kind == Rms::Square || v.kind == Rms::MeanSquare ? RmsValue{Rms::MeanSquare, v.base} : RmsValue{};
    if (m == "add") return v.kind == Rms::MeanSquare ? v : RmsValue{};
    if (m == "rsqrt") return root(v, true);
    if (m == "sqrt") return root(v, false);
    if (m == "reciprocal") return v.kind == Rms::RootMean ? RmsValue{Rms::InvRoot, v.base} : RmsValue{};
    if ((m == "norm" || m == "vector_norm") && v.kind == Rms::Plain) {  // p / ord 2 is the default
      TSNode p = args.size() > exponent_at ? args[exponent_at] : py::keyword_arg(fs.text, e, "p");
      if (ts_node_is_null(p)) p = py::keyword_arg(fs.text, e, "ord");
      if (ts_node_is_null(p) || is_number(fs.text, p, "2")) return {Rms::Norm2, v.base};
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<RmsNormNames> make_rms_norm_names() { return std::make_unique<RmsFlow>(); }

void report_rms_norm(TSNode n, FileScan& fs) {
  fs.report("FUSE101", Severity::Info, n, "hand-written RMSNorm (x * rsqrt(mean(x^2) + eps)) runs as ~5 NPU kernels",
            advice("FUSE101", "fix", {{"availability", availability(fs, "npu_rms_norm")}}));
}

}  // namespace npud::fused_rules

#endif  // NPUD_HAVE_TREE_SITTER
