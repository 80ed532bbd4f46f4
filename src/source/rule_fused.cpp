// FUSE101-FUSE105: hand-written versions of ops torch_npu has fused kernels for. Each written-out
// form runs as several small NPU kernels with intermediate tensors in HBM; the fused API runs
// as one. Source patterns only (the scan has no shapes); the capture-based graph patterns
// confirm them at run time. Never suggests NpuLayerNorm or deprecated ops (NPU-FACTS).
#include "source/rule_context.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <algorithm>
#include <unordered_set>

namespace npud {
namespace {

using py::Kind;

bool has(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

// The text without whitespace, so "x ** 2" and "x**2" read the same.
std::string squeeze(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\\') o += c;
  return o;
}

class FusedPatterns final : public SourceRule {
 public:
  void visit(TSNode n, Kind k, FileScan& fs) override {
    if (fs.scope_id != scope_) {
      scope_ = fs.scope_id;
      scores_.clear();
    }
    if (k == Kind::Assignment) return on_assignment(n, fs);
    if (k == Kind::BinaryOperator) return on_binary(n, fs);
    if (k == Kind::Call) return on_call(n, fs);
  }

 private:
  int scope_ = -1;
  std::unordered_set<std::string> scores_;  // names holding q @ k^T (attention scores)

  static std::string availability(const FileScan& fs, std::string_view op) {
    if (fs.kv.is_custom(op)) return {};
    return " (not in the torch_npu " + fs.kv.version + " op list)";
  }

  // The expression a call works on: first positional argument, or the object of a method.
  static TSNode subject(TSNode call, FileScan& fs, bool method) {
    const auto& f = py::fields();
    if (method) return py::field(py::field(call, f.function), f.object);
    auto args = py::positional_args(call);
    (void)fs;
    return args.empty() ? TSNode{} : args[0];
  }

  // torch.X(...) -> (true, false); y.X() -> (true, true).
  // `d`: dotted name of the call's function.
  static std::pair<bool, bool> is_fn(TSNode call, const std::string& d, FileScan& fs, std::string_view torch_name,
                                     std::string_view method) {
    const auto& f = py::fields();
    if (d == torch_name) return {true, false};
    TSNode fn = py::field(call, f.function);
    if (!method.empty() && py::kind(fn) == Kind::Attribute && fs.text_of(py::field(fn, f.attribute)) == method &&
        !fs.dotted(py::field(fn, f.object)).starts_with("torch"))
      return {true, true};
    return {false, false};
  }

  static bool squares_then_means(TSNode s, FileScan& fs) {
    std::string t = squeeze(fs.text_of(s));
    bool square = has(t, ".pow(2") || has(t, "**2") || has(t, ".square()") || has(t, "torch.square(");
    return square && has(t, "mean(") && !py::subtree_has(s, Kind::BinaryOperator, fs.text, "-");
  }

  void report_rms(TSNode at, FileScan& fs) {
    fs.report("FUSE101", Severity::Info, at,
              "hand-written RMSNorm (x * rsqrt(mean(x^2) + eps)) runs as ~5 NPU kernels",
              "torch_npu.npu_rms_norm(x, weight, epsilon=eps)[0]" + availability(fs, "npu_rms_norm"));
  }

  bool is_matmul_with_transpose(TSNode e, FileScan& fs) {
    std::string t = squeeze(fs.text_of(e));
    bool mm = py::subtree_has(e, Kind::BinaryOperator, fs.text, "@") || has(t, "matmul(") || has(t, "bmm(");
    bool tr = has(t, "transpose(") || has(t, ".mT") || has(t, ".T") || has(t, "permute(") || has(t, ".t()");
    return (mm && tr) || has(t, "einsum(");
  }

  bool mentions_scores(TSNode e, FileScan& fs) {
    if (scores_.empty()) return false;
    if (py::kind(e) == Kind::Identifier) return scores_.count(std::string(fs.text_of(e))) > 0;
    TSTreeCursor c = ts_tree_cursor_new(e);
    bool found = false;
    int depth = 0;
    for (int budget = 2048; budget-- > 0;) {
      TSNode cur = ts_tree_cursor_current_node(&c);
      if (py::kind(cur) == Kind::Identifier && scores_.count(std::string(fs.text_of(cur)))) {
        found = true;
        break;
      }
      if (ts_tree_cursor_goto_first_child(&c)) {
        ++depth;
        continue;
      }
      bool moved = false;
      while (depth > 0 && !(moved = ts_tree_cursor_goto_next_sibling(&c))) {
        ts_tree_cursor_goto_parent(&c);
        --depth;
      }
      if (!moved) break;
    }
    ts_tree_cursor_delete(&c);
    return found;
  }

  void on_assignment(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    TSNode left = py::field(n, f.left), right = py::field(n, f.right);
    if (py::kind(left) != Kind::Identifier || ts_node_is_null(right)) return;
    std::string name(fs.text_of(left));
    if (is_matmul_with_transpose(right, fs) || mentions_scores(right, fs)) scores_.insert(name);
    else scores_.erase(name);
  }

  void on_binary(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    std::string_view op = py::binary_op(fs.text, n);
    if (op == "*") {
      for (TSNode side : {py::field(n, f.left), py::field(n, f.right)}) {
        if (py::kind(side) != Kind::Call) continue;
        std::string d = fs.dotted(py::field(side, f.function));
        if (d == "torch.nn.functional.silu" || d == "torch.silu") {
          fs.report("FUSE104", Severity::Info, n, "hand-written SwiGLU (silu(gate) * up) runs as separate NPU kernels",
                    "torch_npu.npu_swiglu(torch.cat([gate, up], dim=-1), dim=-1), or keep the gate/up projection "
                    "fused in one Linear and pass its output" + availability(fs, "npu_swiglu"));
          return;
        }
      }
    }
    if (op == "/") {
      // x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)
      TSNode right = py::field(n, f.right);
      if (py::kind(right) == Kind::Call) {
        auto [yes, method] = is_fn(right, fs.dotted(py::field(right, f.function)), fs, "torch.sqrt", "sqrt");
        TSNode s = yes ? subject(right, fs, method) : TSNode{};
        if (yes && !ts_node_is_null(s) && squares_then_means(s, fs)) report_rms(n, fs);
      }
    }
  }

  void on_call(TSNode n, FileScan& fs) {
    // FUSE101 RMSNorm: rsqrt of a mean of squares.
    const std::string& d = fs.call_dotted;
    if (auto [yes, method] = is_fn(n, d, fs, "torch.rsqrt", "rsqrt"); yes) {
      TSNode s = subject(n, fs, method);
      if (!ts_node_is_null(s) && squares_then_means(s, fs)) report_rms(n, fs);
      return;
    }
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
                    "torch_npu.npu_rotary_mul(x, cos, sin) applies x*cos + rotate_half(x)*sin in one kernel" +
                        availability(fs, "npu_rotary_mul"));
      }
      return;
    }
    // FUSE103 attention: softmax over q @ k^T.
    {
      auto [yes, method] = is_fn(n, d, fs, "torch.nn.functional.softmax", "softmax");
      if (!yes && d == "torch.softmax") yes = true, method = false;
      if (yes) {
        TSNode s = subject(n, fs, method);
        if (!ts_node_is_null(s) && (is_matmul_with_transpose(s, fs) || mentions_scores(s, fs)))
          fs.report("FUSE103", Severity::Info, n,
                    "hand-written attention (softmax(q @ k^T * scale) @ v) materialises the score matrix in HBM",
                    "F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask) reaches NPU flash attention with "
                    "4-D (B, N, S, D) inputs and a bool or no mask; or torch_npu.npu_fusion_attention(q, k, v, "
                    "head_num, 'BNSD', ...) whose mask uses 1 = masked out (the opposite of PyTorch bool masks)" +
                        availability(fs, "npu_fusion_attention"));
        return;
      }
    }
    // FUSE105 GELU written out: tanh form (0.044715) or erf form (x / sqrt(2)).
    {
      auto [tanh_yes, tanh_m] = is_fn(n, d, fs, "torch.tanh", "tanh");
      auto [erf_yes, erf_m] = is_fn(n, d, fs, "torch.erf", "erf");
      if (!erf_yes && d == "torch.special.erf") erf_yes = true, erf_m = false;
      if (tanh_yes || erf_yes) {
        TSNode s = subject(n, fs, tanh_yes ? tanh_m : erf_m);
        if (ts_node_is_null(s)) return;
        std::string t = squeeze(fs.text_of(s));
        bool tanh_gelu = tanh_yes && has(t, "0.044715");
        bool erf_gelu = erf_yes && (has(t, "sqrt(2") || has(t, "1.41421") || has(t, "0.70710") || has(t, "SQRT1_2"));
        if (tanh_gelu || erf_gelu)
          fs.report("FUSE105", Severity::Info, n,
                    std::string("hand-written GELU (") + (tanh_gelu ? "tanh" : "erf") +
                        " form) runs as several elementwise NPU kernels",
                    tanh_gelu ? "F.gelu(x, approximate='tanh'), torch_npu.npu_gelu(x, approximate='tanh')" +
                                    availability(fs, "npu_gelu") + " or torch_npu.npu_fast_gelu(x) (faster, approximate)"
                              : "F.gelu(x), or torch_npu.npu_gelu(x)" + availability(fs, "npu_gelu") +
                                    " (note: native GELU on the NPU uses tanh unless TORCH_NPU_USE_COMPATIBLE_IMPL=1)");
      }
    }
  }
};

}  // namespace

std::unique_ptr<SourceRule> make_fused_rules() { return std::make_unique<FusedPatterns>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
