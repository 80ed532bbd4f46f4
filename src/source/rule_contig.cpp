// CONTIG101: a permuted/transposed view fed to matmul/linear/conv without .contiguous().
// On the NPU such operands need a hidden contiguous copy (a TransData/ViewCopy task per call),
// except a plain transpose of the last two dims into a matmul, which the kernel takes as a
// transpose flag: that one costs nothing and is not reported. Which dims a transpose swaps
// depends on the tensor's rank, which the rule reads where the code states it (`.view(b, h,
// s, d)`, `b, s, d = x.shape`, `.unsqueeze`, a bmm's 3-D operands).
#include "knowledge/advice_texts.hpp"
#include "source/rule_context.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <algorithm>
#include <optional>

namespace npud {
namespace {

using py::Kind;

enum class View { None, LastTwo, Other };

// The dims a transpose of a tensor of unknown rank swaps, kept so that a consumer that fixes
// the rank (bmm: 3-D) can judge the view again.
struct Swap {
  bool kept = false;
  long a = 0, b = 0;
};

struct Named {
  View view = View::None;
  int line = 0;
  Swap swap;
};

// Methods whose result has the rank of their object (same tensor, other values or layout).
bool keeps_rank(std::string_view m) {
  static constexpr std::string_view kSame[] = {
      "transpose", "swapaxes", "swapdims", "contiguous", "float",       "half",   "bfloat16", "double",
      "to",        "type",     "type_as",  "clone",      "detach",      "masked_fill", "softmax", "log_softmax",
      "tril",      "triu",     "requires_grad_", "cpu",  "npu",         "cuda"};
  return std::find(std::begin(kSame), std::end(kSame), m) != std::end(kSame);
}

// Methods and torch functions whose positional arguments are the result's sizes.
bool sized_by_args(std::string_view m) {
  static constexpr std::string_view kSized[] = {"view", "reshape", "expand", "permute", "repeat",
                                                "new_zeros", "new_ones", "new_empty"};
  return std::find(std::begin(kSized), std::end(kSized), m) != std::end(kSized);
}
bool torch_factory(std::string_view dotted) {
  static constexpr std::string_view kMade[] = {"torch.zeros", "torch.ones", "torch.empty", "torch.randn",
                                               "torch.rand"};
  return std::find(std::begin(kMade), std::end(kMade), dotted) != std::end(kMade);
}

// Python's length of seq[start:stop] for a sequence of n items.
int slice_length(int n, std::optional<long> start, std::optional<long> stop) {
  auto clamp = [n](long i) { return int(std::clamp<long>(i < 0 ? i + n : i, 0, n)); };
  int s = start ? clamp(*start) : 0, e = stop ? clamp(*stop) : n;
  return std::max(0, e - s);
}

class ViewToMatmul final : public SourceRule {
 public:
  void leave(TSNode n, Kind, FileScan& fs) override { on_assignment(n, fs); }

  void visit(TSNode n, Kind k, FileScan& fs) override {
    const auto& f = py::fields();
    if (k == Kind::BinaryOperator) {
      if (py::binary_op(fs.text, n) != "@") return;
      check(py::field(n, f.left), "@", true, 0, fs);
      check(py::field(n, f.right), "@", true, 0, fs);
      return;
    }
    if (k != Kind::Call) return;
    const std::string& d = fs.call_dotted;
    static const std::string_view kMatmul[] = {"torch.matmul", "torch.mm", "torch.bmm", "torch.baddbmm", "torch.addmm"};
    static const std::string_view kOther[] = {"torch.nn.functional.linear", "torch.nn.functional.conv1d",
                                              "torch.nn.functional.conv2d", "torch.nn.functional.conv3d"};
    for (auto m : kMatmul)
      if (d == m) {
        for (TSNode a : py::positional_args(n)) check(a, d, true, operand_rank(m), fs);
        return;
      }
    for (auto m : kOther)
      if (d == m) {
        // F.linear(x, w) multiplies by w^T: a transposed 2-D weight reaches the kernel as a flag.
        auto args = py::positional_args(n);
        for (size_t i = 0; i < args.size(); ++i) {
          bool weight = i == 1 && d == "torch.nn.functional.linear";
          check(args[i], d, weight, weight ? 2 : 0, fs);
        }
        return;
      }
    std::string_view m = py::method_name(fs.text, n);
    if (m == "matmul" || m == "mm" || m == "bmm") {
      TSNode obj = py::method_object(n);
      if (fs.is_torch(obj)) return;
      std::string consumer = "." + std::string(m) + "()";
      check(obj, consumer, true, operand_rank(m), fs);
      for (TSNode a : py::positional_args(n)) check(a, consumer, true, operand_rank(m), fs);
    }
  }

 private:
  LocalNames<Named> views_;  // names holding a permuted/transposed view
  LocalNames<int> ranks_;   // tensor rank of a name, where the code states it
  LocalNames<int> shapes_;  // length of a shape tuple held by a name
  int depth_ = 0;           // of the expression walks below

  void on_assignment(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    // `b, s, d = x.shape` / `x.size()`: x has as many dims as there are names.
    TSNode left = py::field(n, f.left), right = py::strip_parens(py::field(n, f.right));
    if (py::kind(left) == Kind::PatternList) {
      TSNode of = shape_of(right, fs);
      auto targets = py::elements(left);
      bool plain = std::all_of(targets.begin(), targets.end(), [](TSNode t) { return py::kind(t) == Kind::Identifier; });
      if (py::kind(of) == Kind::Identifier && plain) ranks_.set(fs, fs.text_of(of), int(targets.size()));
    }
    for (auto [name, value] : fs.names_bound(n)) {
      // An unpacked part of a chunk/split/unbind keeps (or, for unbind, loses one of) its rank.
      int r = ts_node_is_null(value) ? part_rank(right, fs) : rank_of(value, fs);
      int len = ts_node_is_null(value) ? 0 : shape_length(value, fs);
      Swap swap;
      View v = ts_node_is_null(value) ? View::None : view_of(value, fs, 0, &swap);
      if (r > 0) ranks_.set(fs, name, r);
      else ranks_.erase(fs, name);
      if (len > 0) shapes_.set(fs, name, len);
      else shapes_.erase(fs, name);
      if (v != View::None) views_.set(fs, name, {v, int(ts_node_start_point(n).row) + 1, swap});
      else if (ts_node_is_null(value) || !keeps_layout(value, name, fs)) views_.erase(fs, name);
    }
  }

  // `q = apply_rotary(q, cos, sin)`, `q = q * scale`: elementwise work on a view keeps its
  // layout (PyTorch keeps the strides of a dense input), so q stays the view it was. Not so
  // for what makes a fresh tensor: .contiguous(), .reshape(), matmul, torch.cat...
  static bool keeps_layout(TSNode value, std::string_view name, FileScan& fs) {
    const auto& f = py::fields();
    value = py::strip_parens(value);
    auto is_name = [&](TSNode e) {
      e = py::strip_parens(e);
      return py::kind(e) == Kind::Identifier && fs.text_of(e) == name;
    };
    if (py::kind(value) == Kind::BinaryOperator) {
      std::string_view op = py::binary_op(fs.text, value);
      return op != "@" && (is_name(py::field(value, f.left)) || is_name(py::field(value, f.right)));
    }
    if (py::kind(value) != Kind::Call) return false;
    static constexpr std::string_view kFresh[] = {"contiguous", "reshape", "view", "flatten", "matmul", "mm",
                                                  "bmm", "linear", "cat", "concat", "stack", "einsum"};
    std::string_view m = py::method_name(fs.text, value);
    std::string_view last = m.empty() ? fs.text_of(py::field(value, f.function)) : m;
    if (std::find(std::begin(kFresh), std::end(kFresh), last) != std::end(kFresh)) return false;
    if (!m.empty() && is_name(py::method_object(value))) return true;  // q.float(), q.masked_fill(...)
    auto args = py::positional_args(value);
    return std::any_of(args.begin(), args.end(), is_name);
  }

  // For `x.shape` / `x.size()`: x; a null node otherwise.
  static TSNode shape_of(TSNode e, FileScan& fs) {
    const auto& f = py::fields();
    e = py::strip_parens(e);
    if (py::kind(e) == Kind::Attribute && fs.text_of(py::field(e, f.attribute)) == "shape") return py::field(e, f.object);
    if (py::kind(e) == Kind::Call && py::method_name(fs.text, e) == "size" && py::positional_args(e).empty())
      return py::method_object(e);
    return TSNode{};
  }

  int part_rank(TSNode whole, FileScan& fs) {
    if (py::kind(whole) != Kind::Call) return 0;
    std::string_view m = py::method_name(fs.text, whole);
    int r = rank_of(py::method_object(whole), fs);
    if (m == "chunk" || m == "split" || m == "tensor_split") return r;
    if (m == "unbind" && r > 1) return r - 1;
    return 0;
  }

  // The tensor rank of e, 0 when the code does not say.
  int rank_of(TSNode e, FileScan& fs) {
    DepthGuard guard(depth_);
    if (guard.too_deep()) return 0;
    e = py::strip_parens(e);
    if (py::kind(e) == Kind::Identifier) {
      const int* r = ranks_.find(fs, fs.text_of(e));
      return r ? *r : 0;
    }
    if (py::kind(e) == Kind::Attribute) {
      std::string_view a = fs.text_of(py::field(e, py::fields().attribute));
      return a == "mT" || a == "mH" ? rank_of(py::field(e, py::fields().object), fs) : 0;
    }
    if (py::kind(e) != Kind::Call) return 0;
    std::string_view m = py::method_name(fs.text, e);
    TSNode obj = py::method_object(e);
    if (!m.empty() && fs.is_torch(obj)) return torch_factory("torch." + std::string(m)) ? sizes_length(e, fs) : 0;
    if (sized_by_args(m)) return sizes_length(e, fs);
    if (m == "t") return 2;
    if (keeps_rank(m)) return rank_of(obj, fs);
    int r = (m == "unsqueeze" || m == "squeeze") ? rank_of(obj, fs) : 0;
    if (r && m == "unsqueeze") return r + 1;
    if (r && m == "squeeze" && py::positional_args(e).size() == 1) return r - 1;
    return 0;
  }

  // How many sizes a `.view(...)`-like call gets: `view(b, s, h, d)`, `view(shape)`,
  // `view(*shape, -1)`; 0 when unknown.
  int sizes_length(TSNode call, FileScan& fs) {
    TSNode args = py::field(call, py::fields().arguments);
    std::vector<TSNode> given;
    uint32_t cnt = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < cnt; ++i) {
      TSNode a = ts_node_named_child(args, i);
      if (py::kind(a) != Kind::KeywordArgument && py::kind(a) != Kind::Comment) given.push_back(a);
    }
    if (given.size() == 1 && py::kind(given[0]) != Kind::ListSplat) {
      long v;
      return py::int_literal(fs.text, given[0], v) ? 1 : shape_length(given[0], fs);
    }
    return sizes_listed(given, fs);
  }

  // How many sizes a list of them holds: one each, a `*shape` as many as shape has; 0 when
  // unknown.
  int sizes_listed(const std::vector<TSNode>& items, FileScan& fs) {
    int n = 0;
    for (TSNode a : items) {
      int len = py::kind(a) == Kind::ListSplat ? shape_length(ts_node_named_child(a, 0), fs) : 1;
      if (len == 0) return 0;
      n += len;
    }
    return n;
  }

  // The length of a shape tuple: `(b, s, -1, d)`, `(*input_shape, -1, d)`, `x.shape`,
  // `x.shape[:-1]`, a name holding one; 0 when unknown.
  int shape_length(TSNode e, FileScan& fs) {
    DepthGuard guard(depth_);
    if (guard.too_deep()) return 0;
    e = py::strip_parens(e);
    switch (py::kind(e)) {
      case Kind::Identifier: {
        const int* len = shapes_.find(fs, fs.text_of(e));
        return len ? *len : 0;
      }
      case Kind::Tuple:
      case Kind::List: return sizes_listed(py::elements(e), fs);
      case Kind::Subscript: return sliced_length(e, fs);
      default: {
        TSNode of = shape_of(e, fs);
        return ts_node_is_null(of) ? 0 : rank_of(of, fs);
      }
    }
  }

  // `shape[a:b]` with literal bounds, of a shape whose length is known.
  int sliced_length(TSNode sub, FileScan& fs) {
    TSNode slice = py::field(sub, py::fields().subscript);
    int n = shape_length(py::field(sub, py::fields().value), fs);
    if (n == 0 || py::kind(slice) != Kind::Slice) return 0;
    std::optional<long> bound[3];
    int part = 0;
    uint32_t cnt = ts_node_child_count(slice);
    for (uint32_t i = 0; i < cnt; ++i) {
      TSNode c = ts_node_child(slice, i);
      if (!ts_node_is_named(c)) {
        ++part;  // a ':'
        continue;
      }
      long v;
      if (part > 1 || !py::int_literal(fs.text, c, v)) return 0;  // a step, or a bound we cannot read
      bound[part] = v;
    }
    return slice_length(n, bound[0], bound[1]);
  }

  // Do (a, b) name the last two dims of a rank-r tensor (r 0: unknown)?
  static bool last_two(long a, long b, int r) {
    if (a > b) std::swap(a, b);
    if (r > 0) {
      if (a < 0) a += r;
      if (b < 0) b += r;
      if (a > b) std::swap(a, b);
      return a == r - 2 && b == r - 1;
    }
    // Rank unknown: -2/-1 always; 0/1 of a matrix; 2/3 of a 4-D (B, H, S, D) attention tensor,
    // by far the common case (1/2 is B,S,H,D -> B,H,S,D: a real strided view).
    return (a == -2 && b == -1) || (a == 0 && b == 1) || (a == 2 && b == 3);
  }

  // The two dims a transpose swaps, from positional or keyword (dim0=, dim1=) arguments.
  static bool swapped_dims(TSNode call, FileScan& fs, long& a, long& b) {
    auto args = py::positional_args(call);
    TSNode x = args.size() > 0 ? args[0] : py::keyword_arg(fs.text, call, "dim0");
    TSNode y = args.size() > 1 ? args[1] : py::keyword_arg(fs.text, call, "dim1");
    return !ts_node_is_null(x) && !ts_node_is_null(y) && py::int_literal(fs.text, x, a) && py::int_literal(fs.text, y, b);
  }

  // permute(0, 1, 3, 2) / permute(0, 1, -1, -2): the identity but for the last two dims.
  static bool permutes_last_two(TSNode call, FileScan& fs) {
    auto args = py::positional_args(call);
    long n = long(args.size());
    if (n < 2) return false;
    for (long i = 0; i < n; ++i) {
      long v;
      if (!py::int_literal(fs.text, args[size_t(i)], v)) return false;
      if (v < 0) v += n;
      long want = i == n - 2 ? n - 1 : i == n - 1 ? n - 2 : i;
      if (v != want) return false;
    }
    return true;
  }

  // Is the object of a view itself a permuted/transposed view (directly or through a name)?
  View object_view(TSNode obj, FileScan& fs) {
    obj = py::strip_parens(obj);
    if (py::kind(obj) == Kind::Identifier) {
      const Named* nm = views_.find(fs, fs.text_of(obj));
      return nm ? nm->view : View::None;
    }
    return view_of(obj, fs);
  }

  // What kind of view e is. rank_hint: the rank a consumer fixes when the code does not say;
  // swap (if given) keeps a transpose's dims when neither says. swap_of_view (if given) is set
  // when e swaps the last two dims of a tensor that is already a strided view: the swap is
  // free, the view under it is what costs.
  View view_of(TSNode e, FileScan& fs, int rank_hint = 0, Swap* swap = nullptr, bool* swap_of_view = nullptr) {
    const auto& f = py::fields();
    DepthGuard guard(depth_);
    if (guard.too_deep()) return View::Other;  // a chain of views that deep is no plain transpose
    e = py::strip_parens(e);
    Kind k = py::kind(e);
    if (k == Kind::Attribute) {
      std::string_view m = fs.text_of(py::field(e, f.attribute));
      TSNode obj = py::field(e, f.object);
      int r = rank_of(obj, fs);
      if (r == 0) r = rank_hint;
      if (m == "mT" || m == "mH" || ((m == "T" || m == "H") && r <= 2)) {  // .T of >2 dims reverses them all
        if (object_view(obj, fs) == View::None) return View::LastTwo;
        if (swap_of_view) *swap_of_view = true;
        return View::Other;
      }
      return m == "T" || m == "H" ? View::Other : View::None;
    }
    if (k != Kind::Call) return View::None;
    std::string_view m = py::method_name(fs.text, e);
    TSNode obj = py::method_object(e);
    if (m.empty() || fs.is_torch(obj)) return View::None;  // torch.t(x) etc.: rare
    bool swap_last = false;
    if (m == "t") swap_last = true;
    else if (m == "permute") swap_last = permutes_last_two(e, fs);
    else if (m == "transpose" || m == "swapaxes" || m == "swapdims") {
      long a = 0, b = 0;
      int r = rank_of(obj, fs);
      if (r == 0) r = rank_hint;
      bool read = swapped_dims(e, fs, a, b);
      swap_last = read && last_two(a, b, r);
      if (swap && read && r == 0 && object_view(obj, fs) == View::None) *swap = {true, a, b};
    } else {
      return View::None;
    }
    // A last-two swap of a tensor that is already a strided view is no plain transpose.
    if (!swap_last) return View::Other;
    if (object_view(obj, fs) == View::None) return View::LastTwo;
    if (swap_of_view) *swap_of_view = true;
    return View::Other;
  }

  // matmul takes any rank; bmm/baddbmm 3-D operands; mm/addmm 2-D.
  static int operand_rank(std::string_view consumer) {
    if (consumer.ends_with("bmm")) return 3;
    if (consumer.ends_with("mm")) return 2;
    return 0;
  }

  // consumer_rank: the operand rank the consumer requires (0: any).
  void check(TSNode operand, std::string_view consumer, bool matmul_family, int consumer_rank, FileScan& fs) {
    if (ts_node_is_null(operand)) return;
    operand = py::strip_parens(operand);
    bool swap_of_view = false;
    View v = view_of(operand, fs, consumer_rank, nullptr, &swap_of_view);
    int line = 0;
    if (v == View::None && py::kind(operand) == Kind::Identifier) {
      const Named* nm = views_.find(fs, fs.text_of(operand));
      if (!nm) return;
      v = nm->view;
      if (nm->swap.kept && consumer_rank) v = last_two(nm->swap.a, nm->swap.b, consumer_rank) ? View::LastTwo : View::Other;
      line = nm->line;
    }
    // A last-two-dims transpose reaches the matmul kernel as a flag: no copy, nothing to say.
    if (v == View::None || (v == View::LastTwo && matmul_family)) return;
    std::string what = line ? "`" + std::string(fs.text_of(operand)) + "` (a transposed/permuted view, line " +
                                  std::to_string(line) + ")"
                            : "`" + std::string(fs.text_of(operand)) + "`";
    // `k.transpose(-2, -1)` of a view `k`: the swap reaches the kernel as a flag, `k`'s own
    // permutation is the copy; the finding names that view and where it was made (issue 45).
    if (swap_of_view) {
      TSNode base = py::strip_parens(py::kind(operand) == Kind::Attribute ? py::field(operand, py::fields().object)
                                                                          : py::method_object(operand));
      const Named* nm = py::kind(base) == Kind::Identifier ? views_.find(fs, fs.text_of(base)) : nullptr;
      std::string made = nm ? ", line " + std::to_string(nm->line) : std::string();
      what = "`" + std::string(fs.text_of(base)) + "` (a transposed/permuted view" + made + ", under `" +
             std::string(fs.text_of(operand)) + "`, whose last-two swap is free)";
    }
    fs.report("CONTIG101", Severity::Warning, operand,
              what + " feeds " + std::string(consumer) +
                  " as a non-contiguous view: the NPU kernel needs a contiguous copy (an extra TransData/ViewCopy "
                  "task) on every call",
              advice("CONTIG101", "fix"));
  }
};

}  // namespace

std::unique_ptr<SourceRule> make_contig_rule() { return std::make_unique<ViewToMatmul>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
