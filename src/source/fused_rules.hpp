// The FUSE scan rules, one file each (rule_fuse101_rmsnorm.cpp ... rule_fuse105_gelu.cpp,
// docs/rules/FUSE10N.md, tests/data/scan/fused.py): hand-written versions of ops torch_npu has
// fused kernels for. One walk (rule_fused.cpp) serves them all and keeps what they share: the
// squeezed text of an expression, the fused API's availability note, a call's subject. FUSE101,
// FUSE103 and FUSE104 follow what names hold; the walk keeps that state, per file, through the
// classes below.
#pragma once
#ifdef NPUD_HAVE_TREE_SITTER

#include <memory>
#include <string>
#include <string_view>

#include "source/rule_context.hpp"

namespace npud::fused_rules {

inline bool has(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

// The text without whitespace, so "x ** 2" and "x**2" read the same; "" for a text longer
// than a hand-written pattern can be (callers treat "" as no pattern).
std::string squeeze(std::string_view s);

// The fix's note when the chosen torch_npu does not list the fused op `op`; "" when it does.
std::string availability(const FileScan& fs, std::string_view op);

// The expression a call works on: first positional argument, or the object of a method.
TSNode subject(TSNode call, bool method);

// FUSE101 (rule_fuse101_rmsnorm.cpp): what names hold on the way to an RMSNorm.
class RmsNormNames {
 public:
  virtual ~RmsNormNames() = default;
  virtual void on_assignment(TSNode n, FileScan& fs) = 0;
  // x * ... * rsqrt(mean(x^2) + eps) (at the outermost `*` of the chain), or
  // x / sqrt(mean(x^2) + eps): the binary operator n with operator op.
  virtual bool is_rms_norm(TSNode n, std::string_view op, FileScan& fs) = 0;
};
std::unique_ptr<RmsNormNames> make_rms_norm_names();
void report_rms_norm(TSNode n, FileScan& fs);

// FUSE102 (rule_fuse102_rotary.cpp): the call n of torch.cat / concat / stack.
void check_rotate_half(TSNode n, FileScan& fs);

// FUSE103 (rule_fuse103_attention.cpp): names holding attention scores (q @ k^T).
class AttentionNames {
 public:
  virtual ~AttentionNames() = default;
  virtual void on_assignment(TSNode n, FileScan& fs) = 0;
  // softmax(s): s holds q @ k^T (directly or through names)?
  virtual bool softmax_of_scores(TSNode s, FileScan& fs) = 0;
};
std::unique_ptr<AttentionNames> make_attention_names();
// The softmax call n (a method when `method`).
void check_attention(TSNode n, bool method, AttentionNames& attention, FileScan& fs);

// FUSE104 (rule_fuse104_swiglu.cpp): activations and projections, judged at each `*`.
class SwigluNames {
 public:
  virtual ~SwigluNames() = default;
  virtual void on_assignment(TSNode n, FileScan& fs) = 0;
  virtual void on_product(TSNode n, FileScan& fs) = 0;
  virtual void finish(FileScan& fs) = 0;
};
std::unique_ptr<SwigluNames> make_swiglu_names();

// FUSE105 (rule_fuse105_gelu.cpp): the call n of tanh (tanh_yes) or erf (erf_yes), a method
// when `method`.
void check_gelu(TSNode n, bool tanh_yes, bool erf_yes, bool method, FileScan& fs);

}  // namespace npud::fused_rules

#endif  // NPUD_HAVE_TREE_SITTER
