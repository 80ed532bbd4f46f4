// FUSE104 hand-written-swiglu: silu(gate_proj(x)) * up_proj(x), also behind an activation
// attribute (self.act_fn = ACT2FN[config.hidden_act] / nn.SiLU()) or a chunk of one fused
// projection; fix: torch_npu.npu_swiglu. See docs/rules/FUSE104.md.
#include "knowledge/advice_texts.hpp"
#include "source/fused_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace npud::fused_rules {
namespace {

using py::Kind;

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

class GatedMlp final : public SwigluNames {
 public:
  // `self.act_fn = ...` anywhere in a class (usually __init__), `act = ...` in a function.
  void on_assignment(TSNode n, FileScan& fs) override {
    for (auto [name, value] : fs.names_bound(n)) note_local(n, name, value, fs);
    for (auto [target, value] : fs.assigned(n))
      if (py::kind(target) == Kind::Attribute && !ts_node_is_null(value) &&
          fs.text_of(py::field(target, py::fields().object)) == "self")
        if (auto a = activation(value, fs)) note_attribute(fs.text_of(py::field(target, py::fields().attribute)), *a, fs);
  }

  void on_product(TSNode n, FileScan& fs) override {
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
  void finish(FileScan& fs) override {
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

}  // namespace

std::unique_ptr<SwigluNames> make_swiglu_names() { return std::make_unique<GatedMlp>(); }

}  // namespace npud::fused_rules

#endif  // NPUD_HAVE_TREE_SITTER
