// CUDA001-CUDA006: CUDA-only device strings and APIs, with their exact NPU replacements.
#include "source/rule_context.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <algorithm>
#include <array>
#include <cctype>

namespace npud {
namespace {

using py::Kind;

// torch.cuda members that torch_npu mirrors under torch.npu with the same meaning.
constexpr std::array<std::string_view, 29> kNpuMirrors = {
    "synchronize",    "is_available",         "device_count",         "set_device",
    "current_device", "manual_seed",          "manual_seed_all",      "empty_cache",
    "memory_allocated", "max_memory_allocated", "memory_reserved",    "max_memory_reserved",
    "reset_peak_memory_stats", "Event",       "Stream",               "current_stream",
    "default_stream", "stream",               "amp",                  "get_device_name",
    "device",         "seed",                 "initial_seed",         "get_device_properties",
    "memory_stats",   "memory_summary",       "is_initialized",       "set_stream",
    "reset_max_memory_allocated"};

bool mirrored(std::string_view member) {
  return std::find(kNpuMirrors.begin(), kNpuMirrors.end(), member) != kNpuMirrors.end();
}

// "cuda" or "cuda:N"
bool is_cuda_device(std::string_view s) {
  if (!s.starts_with("cuda")) return false;
  if (s.size() == 4) return true;
  if (s[4] != ':' || s.size() == 5) return false;
  return std::all_of(s.begin() + 5, s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}
bool is_npu_device(std::string_view s) {
  return s == "npu" || (s.starts_with("npu:") && s.size() > 4 &&
                        std::all_of(s.begin() + 4, s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }));
}

bool contains_icase(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it != hay.end();
}

class CudaRules final : public SourceRule {
 public:
  void visit(TSNode n, Kind k, FileScan& fs) override {
    switch (k) {
      case Kind::String: on_string(n, fs); break;
      case Kind::Call: on_call(n, fs); break;
      case Kind::Attribute: on_attribute(n, fs); break;
      case Kind::ImportFromStatement: on_import_from(n, fs); break;
      default: break;
    }
  }

  void finish(FileScan& fs) override {
    bool gets_npu = fs.uses_npu;
    for (const auto& f : fs.findings)
      if (f.fixable() && f.rule.starts_with("CUDA")) gets_npu = true;
    if (!gets_npu || fs.imports_torch_npu) return;
    const char* msg =
        "this file uses NPU APIs (or will, after the CUDA fixes) but does not `import torch_npu`, "
        "which registers the 'npu' device and torch.npu";
    if (!fs.has_import_torch) {
      // No anchor that is safe for an insertion (docstrings, __future__ imports): no edit.
      TSNode first = ts_node_named_child(fs.root, 0);
      fs.report("CUDA006", Severity::Error, ts_node_is_null(first) ? fs.root : first, msg,
                "add `import torch_npu` after `import torch`");
      return;
    }
    TSNode imp = fs.import_torch;
    uint32_t end = ts_node_end_byte(imp);
    uint32_t line_start = ts_node_start_byte(imp) - ts_node_start_point(imp).column;
    std::string indent;
    for (uint32_t i = line_start; i < fs.text.size() && (fs.text[i] == ' ' || fs.text[i] == '\t'); ++i)
      indent += fs.text[i];
    size_t nl = fs.text.find('\n', end);
    TextEdit e;
    if (nl == std::string_view::npos) {
      e.start = e.end = fs.text.size();
      e.replacement = "\n" + indent + "import torch_npu\n";
    } else {
      e.start = e.end = nl + 1;
      e.replacement = indent + "import torch_npu\n";
    }
    fs.report("CUDA006", Severity::Error, imp, msg, "import torch_npu").edits.push_back(std::move(e));
  }


 private:
  // Is a 'cuda' string at n (or its conditional/parenthesised parents) a device argument?
  static bool device_context(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    TSNode p = ts_node_parent(n);
    while (!ts_node_is_null(p) &&
           (py::kind(p) == Kind::ConditionalExpression || py::kind(p) == Kind::Parenthesized)) {
      n = p;
      p = ts_node_parent(p);
    }
    if (ts_node_is_null(p)) return false;
    switch (py::kind(p)) {
      case Kind::KeywordArgument: {
        std::string_view name = fs.text_of(py::field(p, f.name));
        return name == "device" || name == "device_type" || name == "map_location" || name == "device_map";
      }
      case Kind::ArgumentList: {
        TSNode call = ts_node_parent(p);
        if (py::kind(call) != Kind::Call) return false;
        TSNode fn = py::field(call, f.function);
        if (py::kind(fn) == Kind::Attribute) {
          std::string_view member = fs.text_of(py::field(fn, f.attribute));
          if (member == "to" || member == "device" || member == "autocast") return true;
        }
        std::string d = fs.dotted(fn);
        return d.starts_with("torch.") || d == "device" || d == "autocast";
      }
      case Kind::Assignment: {
        TSNode left = py::field(p, f.left);
        return !ts_node_is_null(left) && contains_icase(fs.text_of(left), "device");
      }
      case Kind::Comparison: {
        std::string_view t = fs.text_of(p);
        return t.find(".type") != std::string_view::npos || contains_icase(t, "device");
      }
      default: return false;
    }
  }

  static void on_string(TSNode n, FileScan& fs) {
    bool ok = false;
    std::string_view s = py::plain_string(fs.text, n, ok);
    if (!ok) return;
    if (is_npu_device(s)) {
      fs.uses_npu = true;
      return;
    }
    if (is_cuda_device(s)) {
      if (!device_context(n, fs)) return;
      std::string repl = "npu" + std::string(s.substr(4));
      auto& f = fs.report("CUDA001", Severity::Error, n,
                          "CUDA device string '" + std::string(s) + "': there is no CUDA device on an Ascend NPU",
                          "'" + repl + "'");
      uint32_t cs = py::string_content_start(fs.text, n);
      f.edits.push_back({cs, cs + 4, "npu"});
      return;
    }
    if (s == "nccl") on_nccl(n, fs);
  }

  static void on_nccl(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    TSNode p = ts_node_parent(n);
    bool backend = false;
    if (py::kind(p) == Kind::KeywordArgument) {
      backend = fs.text_of(py::field(p, f.name)) == "backend";
    } else if (py::kind(p) == Kind::ArgumentList) {
      TSNode call = ts_node_parent(p);
      std::string d = fs.dotted(py::field(call, f.function));
      backend = (d.ends_with("init_process_group") || d.ends_with("new_group")) &&
                ts_node_eq(ts_node_named_child(p, 0), n);
    }
    if (!backend) return;
    auto& fd = fs.report("CUDA004", Severity::Error, n,
                         "process-group backend 'nccl' is CUDA-only; Ascend collectives use HCCL", "'hccl'");
    uint32_t cs = py::string_content_start(fs.text, n);
    fd.edits.push_back({cs, cs + 4, "hccl"});
  }

  static void on_call(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    TSNode fn = py::field(n, f.function);
    if (py::kind(fn) != Kind::Attribute) return;
    TSNode attr = py::field(fn, f.attribute);
    std::string_view member = fs.text_of(attr);
    if (member == "npu") {
      fs.uses_npu = true;
      return;
    }
    if (member != "cuda") return;
    std::string obj = fs.dotted(py::field(fn, f.object));
    if (obj == "torch") return;  // torch.cuda is the module (CUDA003), not a method call
    auto& fd = fs.report("CUDA002", Severity::Error, n,
                         "`.cuda()` moves to a CUDA device, which does not exist on an Ascend NPU",
                         "`.npu()` (same arguments)");
    fd.edits.push_back({ts_node_start_byte(attr), ts_node_end_byte(attr), "npu"});
  }

  static void on_attribute(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    TSNode attr = py::field(n, f.attribute);
    std::string_view name = fs.text_of(attr);
    if (name != "cuda" && name != "npu" && name != "cudnn") return;
    std::string obj = fs.dotted(py::field(n, f.object));
    if (name == "npu" && obj == "torch") {
      fs.uses_npu = true;
      return;
    }
    if (name == "cudnn" && obj == "torch.backends") {
      TSNode p = ts_node_parent(n);
      std::string_view member;
      if (py::kind(p) == Kind::Attribute && ts_node_eq(py::field(p, f.object), n))
        member = fs.text_of(py::field(p, f.attribute));
      std::string fix = member == "deterministic"
                            ? "remove it; for deterministic results use torch.use_deterministic_algorithms(True)"
                            : "remove it: cuDNN flags have no meaning on the NPU";
      fs.report("CUDA005", Severity::Info, py::kind(p) == Kind::Attribute ? p : n,
                "torch.backends.cudnn" + (member.empty() ? std::string() : "." + std::string(member)) +
                    " configures cuDNN, which the NPU does not use",
                fix);
      return;
    }
    if (name != "cuda" || obj != "torch") return;
    // torch.cuda: is it the object of a member access (torch.cuda.X)?
    TSNode p = ts_node_parent(n);
    if (py::kind(p) == Kind::Call && ts_node_eq(py::field(p, f.function), n)) return;  // torch.cuda(): not an API
    std::string_view member;
    if (py::kind(p) == Kind::Attribute && ts_node_eq(py::field(p, f.object), n))
      member = fs.text_of(py::field(p, f.attribute));
    if (!member.empty() && mirrored(member)) {
      auto& fd = fs.report("CUDA003", Severity::Error, p,
                           "torch.cuda." + std::string(member) + " drives the CUDA runtime; torch_npu provides torch.npu." +
                               std::string(member),
                           "torch.npu." + std::string(member));
      fd.edits.push_back({ts_node_start_byte(attr), ts_node_end_byte(attr), "npu"});
    } else {
      fs.report("CUDA003", Severity::Error, member.empty() ? n : p,
                "torch.cuda" + (member.empty() ? std::string() : "." + std::string(member)) +
                    " has no known torch.npu equivalent",
                "remove it, or guard it with `if torch.cuda.is_available():`");
    }
  }

  static void on_import_from(TSNode n, FileScan& fs) {
    const auto& f = py::fields();
    TSNode mod = py::field(n, f.module_name);
    if (ts_node_is_null(mod) || py::kind(mod) != Kind::DottedName) return;
    std::string_view m = fs.text_of(mod);
    if (m.starts_with("torch_npu")) return;
    if (m != "torch.cuda" && !m.starts_with("torch.cuda.")) return;
    if (ts_node_named_child_count(mod) < 2) return;
    TSNode cuda = ts_node_named_child(mod, 1);
    // `from torch.cuda import X, Y`: fixable when torch.npu has every X.
    bool all_mirrored = true;
    std::string names;
    if (m == "torch.cuda") {
      uint32_t cnt = ts_node_named_child_count(n);
      for (uint32_t i = 0; i < cnt; ++i) {
        TSNode c = ts_node_named_child(n, i);
        if (ts_node_eq(c, mod) || py::kind(c) == Kind::Comment) continue;
        TSNode nm = py::kind(c) == Kind::AliasedImport ? py::field(c, f.name) : c;
        std::string_view x = fs.text_of(nm);
        if (!mirrored(x)) all_mirrored = false;
      }
    } else {
      TSNode member = ts_node_named_child(mod, 2);
      all_mirrored = !ts_node_is_null(member) && mirrored(fs.text_of(member));
    }
    std::string npu = "torch.npu" + std::string(m.substr(10));
    if (all_mirrored) {
      auto& fd = fs.report("CUDA003", Severity::Error, mod,
                           "import from " + std::string(m) + ", the CUDA runtime; torch_npu provides " + npu, npu);
      fd.edits.push_back({ts_node_start_byte(cuda), ts_node_end_byte(cuda), "npu"});
    } else {
      fs.report("CUDA003", Severity::Error, mod,
                "import from " + std::string(m) + " names something torch.npu has no known equivalent of",
                "import the names from torch.npu where they exist; drop the rest");
    }
  }
};

}  // namespace

std::unique_ptr<SourceRule> make_cuda_rules() { return std::make_unique<CudaRules>(); }

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
