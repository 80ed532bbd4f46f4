// The one walk of the CUDA scan rules (CUDA001-CUDA007, each in rule_cuda00N_*.cpp,
// cuda_rules.hpp): it hands each node to the rule it concerns and keeps what they share, where
// literal values flow (a device or backend string stored in a name that reaches a device or
// backend argument) and the tests that keep NPU tensors out of CUDA-only code (cuda_gates.hpp),
// which withhold the rules' fixes.
#include "source/cuda_gates.hpp"
#include "source/cuda_rules.hpp"
#include "source/rule_context.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <utility>
#include <vector>

namespace npud {
namespace {

using py::Kind;
using namespace cuda_rules;

bool is_npu_device(std::string_view s) {
  return s == "npu" || (s.starts_with("npu:") && s.size() > 4 &&
                        std::all_of(s.begin() + 4, s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }));
}

bool contains_icase(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it != hay.end();
}

// Climbs from a literal through what keeps its value: `x if c else y`, parentheses, and for
// a template the `+` / `%` / `.format(...)` that completes it.
TSNode value_expression(TSNode n, const FileScan& fs) {
  const auto& f = py::fields();
  while (true) {
    TSNode p = fs.parent(n);
    if (ts_node_is_null(p)) return n;
    Kind k = py::kind(p);
    if (k == Kind::ConditionalExpression || k == Kind::Parenthesized) {
      if (k == Kind::ConditionalExpression && ts_node_eq(py::field(p, f.condition), n)) return n;
      n = p;
    } else if (k == Kind::BinaryOperator && ts_node_eq(py::field(p, f.left), n)) {
      n = p;
    } else if (k == Kind::Attribute && ts_node_eq(py::field(p, f.object), n) &&
               py::kind(fs.parent(p)) == Kind::Call) {
      n = fs.parent(p);  // "cuda:{}".format(rank)
    } else {
      return n;
    }
  }
}

// The name a value travels under: an identifier, an attribute's last name (args.dist_backend
// -> dist_backend), or the function a call calls (pick_backend() -> pick_backend).
std::string_view flow_name(TSNode e, const FileScan& fs) {
  const auto& f = py::fields();
  for (int link = 0; link < py::kMaxChainLinks; ++link) {  // f()()...() and ((x)) chains: bounded
    switch (py::kind(e)) {
      case Kind::Identifier: return fs.text_of(e);
      case Kind::Attribute: return fs.text_of(py::field(e, f.attribute));
      case Kind::Call: e = py::field(e, f.function); break;
      case Kind::Parenthesized:
        if (!ts_node_named_child_count(e)) return {};
        e = ts_node_named_child(e, 0);
        break;
      default: return {};
    }
  }
  return {};
}

// argparse's dest for `add_argument('--dist-backend', ...)`: "dist_backend".
std::string argparse_dest(TSNode call, const FileScan& fs) {
  TSNode dest = py::keyword_arg(fs.text, call, "dest");
  bool ok = false;
  if (!ts_node_is_null(dest)) return std::string(py::plain_string(fs.text, dest, ok));
  for (TSNode a : py::positional_args(call)) {
    std::string_view s = py::plain_string(fs.text, a, ok);
    if (!ok || !s.starts_with("--")) continue;
    std::string d(s.substr(2));
    std::replace(d.begin(), d.end(), '-', '_');
    return d;
  }
  return {};
}

class CudaRules final : public SourceRule {
 public:
  void visit(TSNode n, Kind k, FileScan& fs) override {
    size_t mark = fs.findings.size();
    on_node(n, k, fs);
    gates_.visit(n, k, fs);
    // A fix inside a test (`if x.is_cuda:`, `== "cuda"`, torch.cuda.is_available()) changes
    // which branch the NPU takes.
    for (size_t i = mark; i < fs.findings.size(); ++i)
      if (fs.findings[i].fixable() && fs.findings[i].rule != "CUDA002") gates_.note_test(n, fs.findings[i], fs);
  }

  void finish(FileScan& fs) override {
    report_flowed_literals(fs);
    gates_.withhold(fs);
    if (defines_cuda_) withhold_own_cuda_fixes(fs);
    check_import_torch_npu(fs);
  }


 private:
  void on_node(TSNode n, Kind k, FileScan& fs) {
    switch (k) {
      case Kind::String: on_string(n, fs); break;
      case Kind::Call: on_call(n, fs); break;
      case Kind::Attribute: on_attribute(n, fs); break;
      case Kind::ImportFromStatement: check_import_from(n, fs); break;
      case Kind::Assignment: on_assignment(n, fs); break;
      case Kind::FunctionDefinition:
        if (fs.text_of(py::field(n, py::fields().name)) == "cuda") defines_cuda_ = true;
        break;
      case Kind::ReturnStatement: on_return(n, fs); break;
      default: break;
    }
  }

  enum class Want { Device, Backend };
  // A literal that is a device/backend only if its value reaches a device/backend argument:
  // `backend = 'nccl'` ... `init_process_group(backend=backend)`. Decided at finish().
  struct Pending {
    Finding finding;  // rendered when seen: its tree may be gone at finish()
    std::string name;
    Want want;
  };
  std::vector<Pending> pending_;
  CudaGates gates_;
  bool defines_cuda_ = false;  // a `def cuda(...)` in this file
  std::set<std::string, std::less<>> device_sinks_, backend_sinks_;
  std::vector<std::pair<std::string, std::string>> copies_;  // `a = b`: (a, b)

  // Is the value expression e (a literal, climbed by value_expression) used as a device?
  // Test: compared against a device (`device.type == 'cuda'`, `'cuda' in device`).
  static Context device_context(TSNode e, FileScan& fs) {
    const auto& f = py::fields();
    TSNode p = fs.parent(e);
    if (ts_node_is_null(p)) return Context::None;
    switch (py::kind(p)) {
      case Kind::KeywordArgument:
        return is_device_keyword(fs.text_of(py::field(p, f.name))) ? Context::Argument : Context::None;
      case Kind::ArgumentList: {
        TSNode call = fs.parent(p);
        if (py::kind(call) != Kind::Call) return Context::None;
        TSNode fn = py::field(call, f.function);
        if (py::kind(fn) == Kind::Attribute) {
          std::string_view member = fs.text_of(py::field(fn, f.attribute));
          if (member == "to" || member == "device" || member == "autocast") return Context::Argument;
        }
        std::string d = fs.dotted(fn);
        return d.starts_with("torch.") || d == "device" || d == "autocast" ? Context::Argument : Context::None;
      }
      case Kind::Assignment: {
        TSNode left = py::field(p, f.left);
        return !ts_node_is_null(left) && contains_icase(fs.text_of(left), "device") ? Context::Argument
                                                                                    : Context::None;
      }
      case Kind::Comparison: {
        std::string_view t = fs.text_of(p);
        return t.find(".type") != std::string_view::npos || contains_icase(t, "device") ? Context::Test
                                                                                        : Context::None;
      }
      default: return Context::None;
    }
  }

  static bool is_device_keyword(std::string_view k) {
    return k == "device" || k == "device_type" || k == "map_location" || k == "device_map";
  }

  // The name the value expression e is stored or returned under, "" if none: `x = e`,
  // `return e` (the function's name), argparse `default=e` (the option's dest).
  static std::string stored_as(TSNode e, FileScan& fs) {
    const auto& f = py::fields();
    TSNode p = fs.parent(e);
    if (ts_node_is_null(p)) return {};
    if (py::kind(p) == Kind::Assignment && ts_node_eq(py::field(p, f.right), e))
      return std::string(flow_name(py::field(p, f.left), fs));
    if (py::kind(p) == Kind::ReturnStatement) return std::string(fs.function_name());
    if (py::kind(p) == Kind::KeywordArgument && fs.text_of(py::field(p, f.name)) == "default") {
      TSNode call = fs.parent(fs.parent(p));
      if (py::kind(call) == Kind::Call && fs.dotted(py::field(call, f.function)).ends_with("add_argument"))
        return argparse_dest(call, fs);
    }
    return {};
  }

  void on_string(TSNode n, FileScan& fs) {
    bool ok = false;
    std::string_view s = py::plain_string(fs.text, n, ok);
    if (ok && is_npu_device(s)) {
      fs.uses_npu = true;
      return;
    }
    if (ok && s == "nccl") {
      on_nccl(n, fs);
      return;
    }
    CudaLiteral lit = cuda_literal(fs.text, n);
    if (!lit.found) return;
    TSNode e = value_expression(n, fs);
    Context c = device_context(e, fs);
    if (c == Context::None && !lit.templ) {
      if (std::string name = stored_as(e, fs); !name.empty()) {
        size_t mark = fs.findings.size();
        report_device_literal(n, Context::Argument, fs);
        pending_.push_back({std::move(fs.take_since(mark).front()), std::move(name), Want::Device});
      }
      return;
    }
    report_device_literal(n, c, fs);
  }

  void on_nccl(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    TSNode e = value_expression(n, fs);
    TSNode p = fs.parent(e);
    bool backend = false;
    if (py::kind(p) == Kind::KeywordArgument) {
      backend = fs.text_of(py::field(p, f.name)) == "backend";
    } else if (py::kind(p) == Kind::ArgumentList) {
      TSNode call = fs.parent(p);
      backend = is_process_group_call(fs.dotted(py::field(call, f.function))) && ts_node_eq(ts_node_named_child(p, 0), e);
    } else if (py::kind(p) == Kind::Comparison) {
      backend = true;  // `if backend == 'nccl'`: compares against the backend's name
    }
    if (backend) report_nccl(n, fs);
    else if (std::string name = stored_as(e, fs); !name.empty()) {
      size_t mark = fs.findings.size();
      report_nccl(n, fs);
      pending_.push_back({std::move(fs.take_since(mark).front()), std::move(name), Want::Backend});
    }
  }

  static bool is_process_group_call(std::string_view dotted) {
    return dotted.ends_with("init_process_group") || dotted.ends_with("new_group");
  }

  // Records where names reach device and backend arguments, for the literals stored in them.
  void note_sinks(TSNode call, std::string_view dotted, FileScan& fs) {
    const auto& f = py::fields();
    TSNode args = py::field(call, f.arguments);
    uint32_t cnt = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < cnt; ++i) {
      TSNode a = ts_node_named_child(args, i);
      if (py::kind(a) != Kind::KeywordArgument) continue;
      std::string_view k = fs.text_of(py::field(a, f.name));
      std::string_view v = flow_name(py::field(a, f.value), fs);
      if (v.empty()) continue;
      if (is_device_keyword(k)) device_sinks_.emplace(v);
      if (k == "backend") backend_sinks_.emplace(v);
    }
    auto pos = py::positional_args(call);
    if (pos.empty()) return;
    std::string_view first = flow_name(pos[0], fs);
    if (first.empty()) return;
    TSNode fn = py::field(call, f.function);
    std::string_view member = py::kind(fn) == Kind::Attribute ? fs.text_of(py::field(fn, f.attribute)) : "";
    if (is_process_group_call(dotted)) backend_sinks_.emplace(first);
    else if (member == "to" || member == "autocast" || dotted == "torch.device" || dotted.ends_with("set_device") ||
             dotted.ends_with("autocast"))
      device_sinks_.emplace(first);
  }

  void on_assignment(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    TSNode right = py::field(n, f.right);
    Kind rk = py::kind(right);
    if (rk != Kind::Identifier && rk != Kind::Attribute) return;
    std::string_view a = flow_name(py::field(n, f.left), fs), b = flow_name(right, fs);
    if (!a.empty() && !b.empty() && a != b) copies_.emplace_back(a, b);
  }

  // `return name` inside f: f() carries what name holds.
  void on_return(TSNode n, FileScan& fs) {
    if (fs.function_name().empty() || ts_node_named_child_count(n) != 1) return;
    TSNode v = ts_node_named_child(n, 0);
    if (py::kind(v) != Kind::Identifier && py::kind(v) != Kind::Attribute) return;
    std::string_view b = flow_name(v, fs);
    if (!b.empty() && b != fs.function_name()) copies_.emplace_back(fs.function_name(), b);
  }

  // Literals whose stored value reaches a device or backend argument (through `a = b` copies).
  void report_flowed_literals(FileScan& fs) {
    for (auto* sinks : {&device_sinks_, &backend_sinks_}) {
      for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [a, b] : copies_)
          if (sinks->contains(a) && sinks->emplace(b).second) grew = true;
      }
    }
    for (auto& p : pending_)
      if ((p.want == Want::Device ? device_sinks_ : backend_sinks_).contains(p.name))
        fs.findings.push_back(std::move(p.finding));
  }

  void on_call(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    note_sinks(n, fs.call_dotted, fs);
    TSNode fn = py::field(n, f.function);
    if (py::kind(fn) != Kind::Attribute) return;
    TSNode attr = py::field(fn, f.attribute);
    std::string_view member = fs.text_of(attr);
    if (member == "npu") {
      fs.uses_npu = true;
      return;
    }
    if (member == "cuda") report_cuda_call(n, attr, fs);
  }

  static void on_attribute(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    TSNode attr = py::field(n, f.attribute);
    std::string_view name = fs.text_of(attr);
    TSNode p = fs.parent(n);
    bool is_object = py::kind(p) == Kind::Attribute && ts_node_eq(py::field(p, f.object), n);
    if (name == "is_cuda") {
      report_is_cuda(n, attr, fs);
      return;
    }
    // The outermost chain only: torch.backends.cudnn.benchmark, not its torch.backends.cudnn.
    if (!is_object) {
      std::string d = fs.dotted(n);
      if (d == "torch.backends.cudnn" || d.starts_with("torch.backends.cudnn.") || d.starts_with("torch.backends.cuda.")) {
        report_backend_setting(n, d, fs);
        return;
      }
    }
    if (name != "cuda" && name != "npu") return;
    std::string obj = fs.dotted(py::field(n, f.object));
    if (name == "npu" && obj == "torch") {
      fs.uses_npu = true;
      return;
    }
    if (name != "cuda" || obj != "torch") return;
    // torch.cuda: is it the object of a member access (torch.cuda.X)?
    if (py::kind(p) == Kind::Call && ts_node_eq(py::field(p, f.function), n)) return;  // torch.cuda(): not an API
    std::string_view member;
    if (is_object) member = fs.text_of(py::field(p, f.attribute));
    report_torch_cuda(n, p, attr, member, fs);
  }
};

}  // namespace

std::unique_ptr<SourceRule> make_cuda_rules() { return std::make_unique<CudaRules>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
