// FUSE103 hand-written-attention: softmax over q @ k^T, through names holding the scores; fix:
// F.scaled_dot_product_attention or torch_npu.npu_fusion_attention. See docs/rules/FUSE103.md.
#include "knowledge/advice_texts.hpp"
#include "source/fused_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <string>

namespace npud::fused_rules {
namespace {

using py::Kind;

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

class AttentionFlow final : public AttentionNames {
 public:
  void on_assignment(TSNode n, FileScan& fs) override {
    for (auto [name, value] : fs.names_bound(n)) {
      std::string t = ts_node_is_null(value) ? std::string() : squeeze(fs.text_of(value));
      bool scores = !ts_node_is_null(value) && ((!t.empty() && is_scores(value, t, fs)) || mentions(value, scores_, fs));
      set(scores_, name, scores, fs);
      set(transposed_, name, transposes(t), fs);
    }
  }

  // softmax(s): s holds q @ k^T (directly or through names)?
  bool softmax_of_scores(TSNode s, FileScan& fs) override {
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

}  // namespace

std::unique_ptr<AttentionNames> make_attention_names() { return std::make_unique<AttentionFlow>(); }

void check_attention(TSNode n, bool method, AttentionNames& attention, FileScan& fs) {
  TSNode s = subject(n, method);
  if (!ts_node_is_null(s) && attention.softmax_of_scores(s, fs))
    fs.report("FUSE103", Severity::Info, n,
              "hand-written attention (softmax(q @ k^T * scale) @ v) materialises the score matrix in HBM",
              advice("FUSE103", "fix", {{"availability", availability(fs, "npu_fusion_attention")}}));
}

}  // namespace npud::fused_rules

#endif  // NPUD_HAVE_TREE_SITTER
