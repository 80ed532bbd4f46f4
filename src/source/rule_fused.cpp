// FUSE101-FUSE105: hand-written versions of ops torch_npu has fused kernels for. Each written-out
// form runs as several small NPU kernels with intermediate tensors in HBM; the fused API runs
// as one. Source patterns only (the scan has no shapes); the capture-based graph patterns
// confirm them at run time. Model code spreads these ops over statements (`variance = ...`
// then `x * torch.rsqrt(variance + eps)`; `self.act_fn = ACT2FN[...]` in __init__, used in
// forward), so the rules follow simple local dataflow: what a name was assigned in the same
// function, and what a module attribute was assigned anywhere in its class.
// Never suggests NpuLayerNorm or deprecated ops (NPU-FACTS).
#include "knowledge/advice_texts.hpp"
#include "source/rule_context.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <algorithm>
#include <map>
#include <optional>

namespace npud {
namespace {

using py::Kind;

bool has(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

// Hand-written patterns are short expressions: a longer text is never one of them, and
// squeezing the text of every enclosing expression of a long chain would cost its length per
// node (`a0 = a1 = ... = 1`: each assignment's value holds the rest of the chain).
constexpr size_t kPatternTextMax = 4096;

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

// The expression a call works on: first positional argument, or the object of a method.
TSNode subject(TSNode call, bool method) {
  if (method) return py::method_object(call);
  auto args = py::positional_args(call);
  return args.empty() ? TSNode{} : args[0];
}

// ---------------------------------------------------------------------------------------------
// FUSE101 RMSNorm: x * rsqrt(mean(x^2) + eps), x / sqrt(...), x / (x.norm(2) / sqrt(d)).

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

class RmsFlow {
 public:
  void on_assignment(TSNode n, FileScan& fs) {
    for (auto [name, value] : fs.names_bound(n)) {
      RmsValue v = ts_node_is_null(value) ? RmsValue{} : classify(value, fs);
      // A plain name stands for itself; only an alias (h = x.float()) or a step is kept.
      if (v.kind == Rms::None || (v.kind == Rms::Plain && v.base == name)) names_.erase(fs, name);
      else names_.set(fs, name, std::move(v));
    }
  }

  // x * ... * rsqrt(mean(x^2) + eps) (reported at the outermost `*` of the chain), or
  // x / sqrt(mean(x^2) + eps).
  bool is_rms_norm(TSNode n, std::string_view op, FileScan& fs) {
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

// ---------------------------------------------------------------------------------------------
// FUSE104 SwiGLU: silu(gate_proj(x)) * up_proj(x), also behind an activation attribute
// (self.act_fn = ACT2FN[config.hidden_act] / nn.SiLU()) or a chunk of one fused projection.

// What an activation attribute or name holds.
enum class Act { Silu, ConfigDriven, Other };
struct ActInfo {
  Act act = Act::Other;
  std::string source;  // how it was set: "ACT2FN[config.hidden_act]"
};

// One side of a gated product.
enum class Gate { None, Silu, Applied, Projection, Half };
struct GateValue {
  Gate kind = Gate::None;
  std::string callee;  // Applied: the activation called; Projection: the projection
  std::string inner;   // Applied: the projection inside it
  std::string input;   // what the projection reads (Half: the tensor that was split)
};

bool is_silu_fn(std::string_view dotted) {
  return dotted == "torch.nn.functional.silu" || dotted == "torch.silu";
}

class GatedMlp {
 public:
  // `self.act_fn = ...` anywhere in a class (usually __init__), `act = ...` in a function.
  void on_assignment(TSNode n, FileScan& fs) {
    for (auto [name, value] : fs.names_bound(n)) note_local(n, name, value, fs);
    for (auto [target, value] : fs.assigned(n))
      if (py::kind(target) == Kind::Attribute && !ts_node_is_null(value) &&
          fs.text_of(py::field(target, py::fields().object)) == "self")
        if (auto a = activation(value, fs)) note_attribute(fs.text_of(py::field(target, py::fields().attribute)), *a, fs);
  }

  void on_product(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    GateValue l = value_of(py::field(n, f.left), fs), r = value_of(py::field(n, f.right), fs);
    if (l.kind == Gate::Silu || r.kind == Gate::Silu) return report(NodeSpan::of(n), {Act::Silu, "silu"}, fs);
    for (auto [act, other] : {std::pair{&l, &r}, std::pair{&r, &l}}) {
      if (act->kind != Gate::Applied || !gated(*act, *other)) continue;
      std::string_view callee = act->callee;
      if (const ActInfo* a = locals_.find(fs, callee)) return report(NodeSpan::of(n), *a, fs);
      if (callee.starts_with("self.")) {
        pending_.push_back({NodeSpan::of(n), std::string(fs.class_name()), std::string(callee.substr(5))});
        return;
      }
    }
  }

  // Products through `self.<attr>` are judged once the file's attribute assignments are known.
  void finish(FileScan& fs) {
    for (const auto& p : pending_) {
      auto it = by_class_.find({p.cls, p.attr});
      const ActInfo* a = it != by_class_.end() ? &it->second : nullptr;
      if (!a) {
        auto any = by_attr_.find(p.attr);
        if (any != by_attr_.end() && any->second.second) a = &any->second.first;
      }
      if (a) report(p.at, *a, fs);
    }
  }

 private:
  struct Pending {
    NodeSpan at;
    std::string cls, attr;
  };
  std::vector<Pending> pending_;
  std::map<std::pair<std::string, std::string>, ActInfo> by_class_;
  std::map<std::string, std::pair<ActInfo, bool>> by_attr_;  // bool: every class agrees
  LocalNames<ActInfo> locals_;
  LocalNames<GateValue> values_;
  int depth_ = 0;  // of value_of()

  void note_attribute(std::string_view attr, const ActInfo& a, FileScan& fs) {
    by_class_[{std::string(fs.class_name()), std::string(attr)}] = a;
    auto [it, fresh] = by_attr_.try_emplace(std::string(attr), a, true);
    if (!fresh && it->second.first.act != a.act) it->second.second = false;
  }

  void note_local(TSNode assignment, std::string_view name, TSNode value, FileScan& fs) {
    std::optional<ActInfo> a = ts_node_is_null(value) ? std::nullopt : activation(value, fs);
    if (a) locals_.set(fs, name, *a);
    else locals_.erase(fs, name);
    GateValue v = ts_node_is_null(value) ? half_of(assignment, fs) : value_of(value, fs);
    if (v.kind == Gate::None) values_.erase(fs, name);
    else values_.set(fs, name, std::move(v));
  }

  // `gate, up = proj(x).chunk(2, dim=-1)`: each name is a half of proj(x).
  GateValue half_of(TSNode assignment, FileScan& fs) {
    TSNode whole = py::strip_parens(py::field(assignment, py::fields().right));
    std::string_view m = py::kind(whole) == Kind::Call ? py::method_name(fs.text, whole) : "";
    if (m != "chunk" && m != "split" && m != "unbind") return {};
    return {Gate::Half, {}, {}, std::string(fs.text_of(py::method_object(whole)))};
  }

  // What an activation expression is: ACT2FN[...], get_activation(...), nn.SiLU(), F.silu.
  std::optional<ActInfo> activation(TSNode e, FileScan& fs) {
    e = py::strip_parens(e);
    Kind k = py::kind(e);
    if (k != Kind::Subscript && k != Kind::Call && k != Kind::Attribute) return std::nullopt;
    auto info = [&](Act act) { return ActInfo{act, squeeze(fs.text_of(e))}; };
    TSNode key{};
    if (py::kind(e) == Kind::Subscript && fs.dotted(py::field(e, py::fields().value)).ends_with("ACT2FN"))
      key = py::field(e, py::fields().subscript);
    else if (py::kind(e) == Kind::Call && fs.call_dotted_of(e).ends_with("get_activation"))
      key = py::positional_args(e).empty() ? TSNode{} : py::positional_args(e)[0];
    if (!ts_node_is_null(key)) {
      bool ok = false;
      std::string_view s = py::plain_string(fs.text, key, ok);
      if (ok) return info(s == "silu" || s == "swish" ? Act::Silu : Act::Other);
      return info(Act::ConfigDriven);
    }
    std::string d = py::kind(e) == Kind::Call ? fs.call_dotted_of(e) : fs.dotted(e);
    if (d == "torch.nn.SiLU" || is_silu_fn(d)) return info(Act::Silu);
    if (d.starts_with("torch.nn.functional.") || (d.starts_with("torch.nn.") && py::kind(e) == Kind::Call))
      return info(Act::Other);  // nn.GELU(), F.gelu: another gated unit (GeGLU...)
    return std::nullopt;
  }

  // A projection's input: `self.up_proj(x)` -> ("self.up_proj", "x").
  static bool projection(TSNode e, FileScan& fs, std::string& callee, std::string& input) {
    e = py::strip_parens(e);
    if (py::kind(e) != Kind::Call) return false;
    auto args = py::positional_args(e);
    TSNode fn = py::field(e, py::fields().function);
    if (args.size() != 1 || (py::kind(fn) != Kind::Attribute && py::kind(fn) != Kind::Identifier)) return false;
    callee = fs.text_of(fn);
    input = fs.text_of(args[0]);
    return true;
  }

  GateValue value_of(TSNode e, FileScan& fs) {
    DepthGuard guard(depth_);
    if (guard.too_deep()) return {};
    e = py::strip_parens(e);
    if (py::kind(e) == Kind::Identifier) {
      const GateValue* v = values_.find(fs, fs.text_of(e));
      return v ? *v : GateValue{};
    }
    if (py::kind(e) != Kind::Call) return {};
    std::string callee, input;
    if (!projection(e, fs, callee, input)) return {};
    if (is_silu_fn(fs.call_dotted_of(e))) return {Gate::Silu, callee, {}, input};
    TSNode arg = py::strip_parens(py::positional_args(e)[0]);
    std::string inner, x;
    if (projection(arg, fs, inner, x)) return {Gate::Applied, callee, inner, x};
    GateValue a = value_of(arg, fs);  // act(gate) with gate a half or a projection held by a name
    if (a.kind == Gate::Half) return {Gate::Applied, callee, {}, a.input};
    if (a.kind == Gate::Projection) return {Gate::Applied, callee, a.callee, a.input};
    return {Gate::Projection, callee, {}, input};
  }

  // act(proj_a(x)) * proj_b(x), or act(gate) * up with gate and up halves of one tensor.
  static bool gated(const GateValue& act, const GateValue& other) {
    if (act.inner.empty()) return other.kind == Gate::Half && other.input == act.input;
    return other.kind == Gate::Projection && other.input == act.input && other.callee != act.inner;
  }

  static void report(const NodeSpan& at, const ActInfo& a, FileScan& fs) {
    if (a.act == Act::Other) return;
    std::string msg = a.act == Act::Silu
                          ? "hand-written SwiGLU (silu(gate) * up) runs as separate NPU kernels"
                          : "gated MLP act(gate) * up with the activation `" + a.source +
                                "`: when the config names \"silu\" (the Llama/Mistral/Qwen default) it is SwiGLU, "
                                "run as separate silu and mul NPU kernels";
    fs.report("FUSE104", Severity::Info, at, std::move(msg),
              advice("FUSE104", "fix", {{"availability", availability(fs, "npu_swiglu")}}));
  }
};

// ---------------------------------------------------------------------------------------------
// FUSE103 attention: softmax over q @ k^T, through names holding the scores.

// "bhqd,bhkd->bhqk": the contracted index is the last of both operands (q @ k^T), not
// "bhqk,bhkd->bhqd" (probs @ v).
bool einsum_scores(std::string_view eq) {
  std::string e;
  for (char c : eq)
    if (c != ' ' && c != '.') e += c;
  size_t arrow = e.find("->"), comma = e.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow) return false;
  std::string a = e.substr(0, comma), b = e.substr(comma + 1, arrow - comma - 1), out = e.substr(arrow + 2);
  if (a.empty() || b.empty() || b.find(',') != std::string::npos) return false;
  return a.back() == b.back() && out.find(a.back()) == std::string::npos;
}

class AttentionFlow {
 public:
  void on_assignment(TSNode n, FileScan& fs) {
    for (auto [name, value] : fs.names_bound(n)) {
      std::string t = ts_node_is_null(value) ? std::string() : squeeze(fs.text_of(value));
      bool scores = !ts_node_is_null(value) && ((!t.empty() && is_scores(value, t, fs)) || mentions(value, scores_, fs));
      set(scores_, name, scores, fs);
      set(transposed_, name, transposes(t), fs);
    }
  }

  // softmax(s): s holds q @ k^T (directly or through names)?
  bool softmax_of_scores(TSNode s, FileScan& fs) {
    std::string t = squeeze(fs.text_of(s));
    return (!t.empty() && is_scores(s, t, fs)) || mentions(s, scores_, fs);
  }

 private:
  LocalNames<bool> scores_;      // names holding q @ k^T (attention scores)
  LocalNames<bool> transposed_;  // names holding a transposed operand (k = key.transpose(-1, -2)...)

  static void set(LocalNames<bool>& names, std::string_view name, bool on, FileScan& fs) {
    if (on) names.set(fs, name, true);
    else names.erase(fs, name);
  }

  // t: an expression's text, squeezed.
  static bool transposes(std::string_view t) {
    return has(t, "transpose(") || has(t, ".mT") || has(t, ".T") || has(t, "permute(") || has(t, ".t()");
  }

  // q @ k^T: a matmul (@, matmul, bmm, baddbmm) with a transposed operand, or an einsum whose
  // contracted index is the last of both operands.
  bool is_scores(TSNode e, std::string_view t, FileScan& fs) {
    bool mm = has(t, "matmul(") || has(t, "bmm(") || (has(t, "@") && py::subtree_has(e, Kind::BinaryOperator, fs.text, "@"));
    if (mm && (transposes(t) || mentions(e, transposed_, fs))) return true;
    return has(t, "einsum(") && py::any_node(e, [&](TSNode c) {
             if (py::kind(c) != Kind::Call || !fs.call_dotted_of(c).ends_with("einsum")) return false;
             auto args = py::positional_args(c);
             bool ok = false;
             std::string_view eq = args.empty() ? std::string_view() : py::plain_string(fs.text, args[0], ok);
             return ok && einsum_scores(eq);
           });
  }

  static bool mentions(TSNode e, const LocalNames<bool>& names, FileScan& fs) {
    if (names.empty(fs)) return false;
    return py::any_node(e, [&](TSNode c) { return py::kind(c) == Kind::Identifier && names.find(fs, fs.text_of(c)); },
                        2048);
  }
};

// ---------------------------------------------------------------------------------------------

class FusedPatterns final : public SourceRule {
 public:
  void visit(TSNode n, Kind k, FileScan& fs) override {
    if (k == Kind::BinaryOperator) return on_binary(n, fs);
    if (k == Kind::Call) return on_call(n, fs);
  }

  void leave(TSNode n, Kind, FileScan& fs) override {
    rms_.on_assignment(n, fs);
    glu_.on_assignment(n, fs);
    attention_.on_assignment(n, fs);
  }

  void finish(FileScan& fs) override { glu_.finish(fs); }

 private:
  RmsFlow rms_;
  GatedMlp glu_;
  AttentionFlow attention_;

  void on_binary(TSNode n, FileScan& fs) {
    std::string_view op = py::binary_op(fs.text, n);
    if (op == "*") glu_.on_product(n, fs);
    if ((op == "*" || op == "/") && rms_.is_rms_norm(n, op, fs))
      fs.report("FUSE101", Severity::Info, n, "hand-written RMSNorm (x * rsqrt(mean(x^2) + eps)) runs as ~5 NPU kernels",
                advice("FUSE101", "fix", {{"availability", availability(fs, "npu_rms_norm")}}));
  }

  void on_call(TSNode n, FileScan& fs) {
    const std::string& d = fs.call_dotted;
    // FUSE102 rotary: torch.cat((-x2, x1), dim=-1), the body of rotate_half.
    if (d == "torch.cat" || d == "torch.concat" || d == "torch.stack") {
      auto args = py::positional_args(n);
      if (args.empty()) return;
      TSNode seq = args[0];
      Kind sk = py::kind(seq);
      if ((sk == Kind::Tuple || sk == Kind::List) && ts_node_named_child_count(seq) == 2) {
        TSNode first = ts_node_named_child(seq, 0);
        if (py::kind(first) == Kind::UnaryOperator && fs.text_of(first).starts_with("-"))
          fs.report("FUSE102", Severity::Info, n,
                    "hand-written rotary embedding (rotate_half: cat(-x2, x1)) runs as slice/neg/cat/mul/add kernels",
                    advice("FUSE102", "fix", {{"availability", availability(fs, "npu_rotary_mul")}}));
      }
      return;
    }
    // FUSE103 attention: softmax over q @ k^T.
    {
      auto [yes, method] = is_fn(n, d, fs, "torch.nn.functional.softmax", "softmax");
      if (!yes && d == "torch.softmax") yes = true, method = false;
      if (yes) {
        TSNode s = subject(n, method);
        if (!ts_node_is_null(s) && attention_.softmax_of_scores(s, fs))
          fs.report("FUSE103", Severity::Info, n,
                    "hand-written attention (softmax(q @ k^T * scale) @ v) materialises the score matrix in HBM",
                    advice("FUSE103", "fix", {{"availability", availability(fs, "npu_fusion_attention")}}));
        return;
      }
    }
    // FUSE105 GELU written out: tanh form (0.044715) or erf form (x / sqrt(2)).
    {
      auto [tanh_yes, tanh_m] = is_fn(n, d, fs, "torch.tanh", "tanh");
      auto [erf_yes, erf_m] = is_fn(n, d, fs, "torch.erf", "erf");
      if (!erf_yes && d == "torch.special.erf") erf_yes = true, erf_m = false;
      if (tanh_yes || erf_yes) {
        TSNode s = subject(n, tanh_yes ? tanh_m : erf_m);
        if (ts_node_is_null(s)) return;
        std::string t = squeeze(fs.text_of(s));
        bool tanh_gelu = tanh_yes && has(t, "0.044715");
        bool erf_gelu = erf_yes && (has(t, "sqrt(2") || has(t, "1.41421") || has(t, "0.70710") || has(t, "SQRT1_2"));
        if (tanh_gelu || erf_gelu)
          fs.report("FUSE105", Severity::Info, n,
                    std::string("hand-written GELU (") + (tanh_gelu ? "tanh" : "erf") +
                        " form) runs as several elementwise NPU kernels",
                    advice("FUSE105", tanh_gelu ? "fix_tanh" : "fix_erf",
                           {{"availability", availability(fs, "npu_gelu")}}));
      }
    }
  }
};

}  // namespace

std::unique_ptr<SourceRule> make_fused_rules() { return std::make_unique<FusedPatterns>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
