// CONTIG101: a permuted/transposed view fed to matmul/linear/conv without .contiguous().
// On the NPU such operands either need a hidden contiguous copy (a TransData/ViewCopy task
// per call) or, for a plain transpose of the last two dims, are passed to the matmul kernel
// as a transpose flag; the rule reports the first kind as a warning, the second as info.
#include "source/rule_context.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <unordered_map>

namespace npud {
namespace {

using py::Kind;

enum class View { None, LastTwo, Other };

class ViewToMatmul final : public SourceRule {
 public:
  void visit(TSNode n, Kind k, FileScan& fs) override {
    if (fs.scope_id != scope_) {
      scope_ = fs.scope_id;
      names_.clear();
    }
    const auto& f = py::fields();
    if (k == Kind::Assignment) {
      TSNode left = py::field(n, f.left), right = py::field(n, f.right);
      if (py::kind(left) != Kind::Identifier || ts_node_is_null(right)) return;
      std::string name(fs.text_of(left));
      View v = view_of(right, fs);
      if (v == View::None) names_.erase(name);
      else names_[name] = {v, int(ts_node_start_point(n).row) + 1};
      return;
    }
    if (k == Kind::BinaryOperator) {
      if (py::binary_op(fs.text, n) != "@") return;
      check(py::field(n, f.left), "@", true, fs);
      check(py::field(n, f.right), "@", true, fs);
      return;
    }
    if (k != Kind::Call) return;
    TSNode fn = py::field(n, f.function);
    const std::string& d = fs.call_dotted;
    static const std::string_view kMatmul[] = {"torch.matmul", "torch.mm", "torch.bmm", "torch.baddbmm", "torch.addmm"};
    static const std::string_view kOther[] = {"torch.nn.functional.linear", "torch.nn.functional.conv1d",
                                              "torch.nn.functional.conv2d", "torch.nn.functional.conv3d"};
    for (auto m : kMatmul)
      if (d == m) {
        for (TSNode a : py::positional_args(n)) check(a, d, true, fs);
        return;
      }
    for (auto m : kOther)
      if (d == m) {
        for (TSNode a : py::positional_args(n)) check(a, d, false, fs);
        return;
      }
    if (py::kind(fn) == Kind::Attribute) {
      std::string_view m = fs.text_of(py::field(fn, f.attribute));
      if (m == "matmul" || m == "mm" || m == "bmm") {
        std::string obj = fs.dotted(py::field(fn, f.object));
        if (obj == "torch") return;
        check(py::field(fn, f.object), "." + std::string(m) + "()", true, fs);
        for (TSNode a : py::positional_args(n)) check(a, "." + std::string(m) + "()", true, fs);
      }
    }
  }

 private:
  struct Named {
    View view;
    int line;
  };
  int scope_ = -1;
  std::unordered_map<std::string, Named> names_;

  static TSNode strip(TSNode e) {
    while (py::kind(e) == Kind::Parenthesized && ts_node_named_child_count(e) == 1) e = ts_node_named_child(e, 0);
    return e;
  }

  static View view_of(TSNode e, FileScan& fs) {
    const auto& f = py::fields();
    e = strip(e);
    Kind k = py::kind(e);
    if (k == Kind::Attribute) {
      std::string_view m = fs.text_of(py::field(e, f.attribute));
      if (m == "T" || m == "mT" || m == "H" || m == "mH") return View::LastTwo;
      return View::None;
    }
    if (k != Kind::Call) return View::None;
    TSNode fn = py::field(e, f.function);
    if (py::kind(fn) != Kind::Attribute) return View::None;
    std::string_view m = fs.text_of(py::field(fn, f.attribute));
    if (fs.dotted(py::field(fn, f.object)) == "torch") return View::None;  // torch.t(x) etc.: rare
    if (m == "t") return View::LastTwo;
    if (m == "permute") return View::Other;
    if (m == "transpose" || m == "swapaxes" || m == "swapdims") {
      auto args = py::positional_args(e);
      if (args.size() == 2) {
        std::string_view a = fs.text_of(args[0]), b = fs.text_of(args[1]);
        if ((a == "-2" && b == "-1") || (a == "-1" && b == "-2") || (a == "0" && b == "1") || (a == "1" && b == "0"))
          return View::LastTwo;
      }
      return View::Other;
    }
    return View::None;
  }

  void check(TSNode operand, std::string_view consumer, bool matmul_family, FileScan& fs) {
    if (ts_node_is_null(operand)) return;
    operand = strip(operand);
    View v = view_of(operand, fs);
    int line = 0;
    if (v == View::None && py::kind(operand) == Kind::Identifier) {
      auto it = names_.find(std::string(fs.text_of(operand)));
      if (it == names_.end()) return;
      v = it->second.view;
      line = it->second.line;
    }
    if (v == View::None) return;
    bool flag_only = v == View::LastTwo && matmul_family;
    std::string what = line ? "`" + std::string(fs.text_of(operand)) + "` (a transposed/permuted view, line " +
                                  std::to_string(line) + ")"
                            : "`" + std::string(fs.text_of(operand)) + "`";
    std::string msg = what + " feeds " + std::string(consumer) +
                      (flag_only ? " as a non-contiguous view: the NPU matmul takes a last-two-dims transpose as a "
                                   "flag, but any other layout change costs a hidden copy"
                                 : " as a non-contiguous view: the NPU kernel needs a contiguous copy "
                                   "(an extra TransData/ViewCopy task) on every call");
    fs.report("CONTIG101", flag_only ? Severity::Info : Severity::Warning, operand, msg,
              flag_only ? "keep it a plain last-two-dims transpose, or store the operand pre-transposed"
                        : "produce the operand in the layout the kernel wants (store weights pre-transposed), or "
                          "call .contiguous() once where the view is made, outside hot loops");
  }
};

}  // namespace

std::unique_ptr<SourceRule> make_contig_rule() { return std::make_unique<ViewToMatmul>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
