// FUSE102 hand-written-rotary: torch.cat((-x2, x1), dim=-1), the body of rotate_half; fix:
// torch_npu.npu_rotary_mul. See docs/rules/FUSE102.md.
#include "knowledge/advice_texts.hpp"
#include "source/fused_rules.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

namespace npud::fused_rules {

using py::Kind;

void check_rotate_half(TSNode n, FileScan& fs) {
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
}

}  // namespace npud::fused_rules

#endif  // NPUD_HAVE_TREE_SITTER
