#include "source/cuda_gates.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <algorithm>
#include <cctype>
#include <cstring>
#include <tuple>

#include "knowledge/advice_texts.hpp"

namespace npud {
namespace {

using py::Kind;

// Packages whose code only runs on CUDA GPUs (kernels, JIT compilers, CUDA bindings).
bool cuda_only_package(std::string_view first) {
  static constexpr std::string_view kPackages[] = {
      "triton",     "apex",     "amp_C",        "flash_attn", "flash_attn_2_cuda",  "xformers",
      "mamba_ssm",  "causal_conv1d", "cupy",    "pycuda",     "transformer_engine", "deep_gemm",
      "flashinfer", "liger_kernel",  "fla",     "xielu"};
  return std::find(std::begin(kPackages), std::end(kPackages), first) != std::end(kPackages);
}

std::string_view first_component(std::string_view dotted) { return dotted.substr(0, dotted.find('.')); }

// A name that says it is CUDA code (selective_scan_cuda, _xielu_cuda_fn, cuda_kernels_forward,
// load_cuda_kernels), not a predicate about CUDA (is_cuda, has_cuda_graphs, use_cuda) and not
// torch.cuda / .cuda() themselves, which the CUDA rules map to the NPU.
bool cuda_named(std::string_view part) {
  std::string l(part);
  for (char& c : l) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (l == "cuda" || l.find("cuda") == std::string::npos) return false;
  l.erase(0, l.find_first_not_of('_'));
  for (std::string_view p : {"is_", "has_", "use_", "no_", "with_"})
    if (l.starts_with(p)) return false;
  return true;
}

// The names of a call chain, base first: `get_kernel("x").forward` -> get_kernel, forward;
// `kernel[grid]` -> kernel. `based` is false when the chain does not start at a name.
std::vector<std::string_view> chain(TSNode e, const FileScan& fs, bool& based) {
  const auto& f = py::fields();
  std::vector<std::string_view> parts;
  based = false;
  for (int guard = 0; guard < 64 && !based; ++guard) {
    e = py::strip_parens(e);
    Kind k = py::kind(e);
    if (k == Kind::Identifier) {
      parts.push_back(fs.text_of(e));
      based = true;
    } else if (k == Kind::Attribute) {
      parts.push_back(fs.text_of(py::field(e, f.attribute)));
      e = py::field(e, f.object);
    } else if (k == Kind::Call) {
      e = py::field(e, f.function);
    } else if (k == Kind::Subscript) {
      e = py::field(e, f.value);
    } else {
      break;
    }
  }
  std::reverse(parts.begin(), parts.end());
  return parts;
}

// How a call chain (base resolved through imports) says it is CUDA-only: Strong for
// torch.cuda APIs torch.npu lacks and CUDA-only packages; Named when only a name says so
// (which the file's own definition of that name overrides). `plain_base`: the base is a local
// variable holding data (cuda_devices = set()), whose name says nothing about code.
enum class Says { No, Named, Strong };

Says cuda_only_chain(const std::vector<std::string_view>& parts, bool based, bool plain_base, const FileScan& fs) {
  if (parts.empty()) return Says::No;
  std::string_view base = parts[0];  // through the imports: `F` -> torch.nn.functional
  if (based)
    if (auto it = fs.aliases.find(std::string(base)); it != fs.aliases.end()) base = it->second;
  if (first_component(base) == "torch") {
    std::string resolved(base);
    for (size_t i = 1; i < parts.size(); ++i) resolved += "." + std::string(parts[i]);
    if (!resolved.starts_with("torch.cuda.")) return Says::No;
    std::string_view member = std::string_view(resolved).substr(11);
    return npu_mirrors(member.substr(0, member.find('.'))) ? Says::No : Says::Strong;  // get_device_capability
  }
  if (parts.back() == "cuda") return Says::No;  // .cuda(): CUDA002 makes it .npu()
  if (cuda_only_package(first_component(base))) return Says::Strong;
  return std::any_of(parts.begin() + (plain_base ? 1 : 0), parts.end(), cuda_named) ? Says::Named : Says::No;
}

// A dotted module name as a chain: "apex.normalization" -> apex, normalization.
std::vector<std::string_view> module_chain(std::string_view mod) {
  std::vector<std::string_view> parts;
  for (size_t s = 0; s <= mod.size();) {
    size_t dot = std::min(mod.find('.', s), mod.size());
    parts.push_back(mod.substr(s, dot - s));
    s = dot + 1;
  }
  return parts;
}

// Does a block end in return/raise/continue/break (comments after it aside)?
bool exits(TSNode block) {
  uint32_t n = ts_node_named_child_count(block);
  while (n > 0 && py::kind(ts_node_named_child(block, n - 1)) == Kind::Comment) --n;
  if (n == 0) return false;
  TSNode last = ts_node_named_child(block, n - 1);
  std::string_view t = ts_node_type(last);
  return py::kind(last) == Kind::ReturnStatement || py::kind(last) == Kind::RaiseStatement ||
         t == "continue_statement" || t == "break_statement";
}

int line_of(TSNode n) { return ts_node_is_null(n) ? 0 : int(ts_node_start_point(n).row) + 1; }

// `!=`, `not in`: the comparison is true when the device is not CUDA.
bool negates(TSNode comparison) {
  uint32_t n = ts_node_child_count(comparison);
  for (uint32_t i = 0; i < n; ++i) {
    std::string_view t = ts_node_type(ts_node_child(comparison, i));
    if (t == "!=" || t == "not in") return true;
  }
  return false;
}

// any(...), all(...), bool(...): true exactly when (some of) their argument is.
bool keeps_truth(TSNode call, const FileScan& fs) {
  std::string d = fs.call_dotted_of(call);
  return d == "any" || d == "all" || d == "bool";
}

// `a and b` evaluates b when a is true, `a or b` when a is false: is b evaluated when the test
// in a says CUDA (polarity > 0: the test is true for CUDA)?
bool evaluated_for_cuda(TSNode boolean, int polarity, const FileScan& fs) {
  std::string_view op = py::binary_op(fs.text, boolean);
  return (op == "and" && polarity > 0) || (op == "or" && polarity < 0);
}

// What one gate looks at: the statements its branch selects are usually a few lines; a bound
// keeps a function of thousands of `if not x.is_cuda: return` gates linear (each would
// otherwise walk every statement after it).
constexpr size_t kGateStatements = 64;
constexpr int kGateNodes = 1 << 14;

// Following statements of n in its block (n's parent is `parent`), at most kGateStatements.
// A cursor over the block, entered at n's byte (the block's statements sit in a balanced tree
// of hidden nodes, so that is a descent, not a count from the first statement);
// ts_node_next_named_sibling climbs from the root on every step.
void statements_after(TSNode n, TSNode parent, std::vector<TSNode>& out) {
  if (ts_node_is_null(parent)) return;
  TSTreeCursor c = ts_tree_cursor_new(parent);
  bool after = false;
  for (bool more = ts_tree_cursor_goto_first_child_for_byte(&c, ts_node_start_byte(n)) >= 0;
       more && out.size() < kGateStatements; more = ts_tree_cursor_goto_next_sibling(&c)) {
    TSNode s = ts_tree_cursor_current_node(&c);
    if (after && ts_node_is_named(s) && py::kind(s) != Kind::Comment) out.push_back(s);
    after = after || ts_node_eq(s, n);
  }
  ts_tree_cursor_delete(&c);
}

// What NPU code can stand in for a CUDA-only kernel, by what its name says.
std::string npu_alternative(std::string_view shown) {
  std::string l(shown);
  for (char& c : l) c = char(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::pair<std::string_view, std::string_view> kAlternatives[] = {
      {"flash_attn", "torch_npu.npu_fusion_attention or F.scaled_dot_product_attention"},
      {"xformers", "torch_npu.npu_fusion_attention or F.scaled_dot_product_attention"},
      {"rms_norm", "torch_npu.npu_rms_norm"},
      {"rmsnorm", "torch_npu.npu_rms_norm"},
      {"layer_norm", "torch.nn.functional.layer_norm"},
      {"layernorm", "torch.nn.functional.layer_norm"},
      {"rotary", "torch_npu.npu_rotary_mul"},
      {"swiglu", "torch_npu.npu_swiglu"},
      {"silu_and_mul", "torch_npu.npu_swiglu"},
      {"gelu", "torch_npu.npu_gelu"},
  };
  for (const auto& [key, npu] : kAlternatives)
    if (l.find(key) != std::string::npos) return std::string(npu);
  return {};
}

}  // namespace

void CudaGates::visit(TSNode n, Kind k, FileScan& fs) {
  static const TSSymbol kGlobal = ts_language_symbol_for_name(py::language(), "global_statement", 16, true);
  switch (k) {
    case Kind::FunctionDefinition: on_function(n, fs); break;
    case Kind::Call:
      if (fs.scope_id != 0) record_call(n, fs);
      break;
    case Kind::Assignment: bind(n, fs); break;
    case Kind::Identifier:
      if (!flags_.empty(fs)) on_flag_use(n, fs);
      break;
    default:
      // `global lsh_cumulation` in load_cuda_kernels(): what the loader binds is CUDA code.
      if (ts_node_symbol(n) == kGlobal && cuda_named(fs.function_name())) {
        uint32_t cnt = ts_node_named_child_count(n);
        for (uint32_t i = 0; i < cnt; ++i) loaded_globals_.emplace(fs.text_of(ts_node_named_child(n, i)));
      }
      break;
  }
}

// `forward_func = rwkv_cuda_kernel.forward` binds CUDA-only code to a name; `cuda_devices =
// set()` binds data, whatever the name says.
void CudaGates::bind(TSNode assignment, FileScan& fs) {
  for (auto [name, value] : fs.names_bound(assignment)) {
    if (!ts_node_is_null(value) && cuda_named_ref(value, fs)) {
      bound_.set(fs, name, std::string(fs.text_of(value)));
      plain_.erase(fs, name);
    } else {
      bound_.erase(fs, name);
      plain_.set(fs, name, true);
    }
  }
}

void CudaGates::on_function(TSNode n, FileScan& fs) {
  std::string_view name = fs.text_of(py::field(n, py::fields().name));
  std::string_view cls = fs.class_name();
  std::string key = cls.empty() ? std::string(name) : std::string(cls) + "." + std::string(name);
  function_key_[fs.scope_id] = {key, std::string(cls)};
  defined_.insert(key);
  if (!cls.empty()) methods_[std::string(cls)].push_back(key);
  // Parameters hold data (a model, a device list), whatever their names say.
  TSNode params = py::field(n, py::fields().parameters);
  uint32_t np = ts_node_named_child_count(params);
  for (uint32_t i = 0; i < np; ++i) {
    TSNode param = ts_node_named_child(params, i);
    if (py::kind(param) != Kind::Identifier) param = ts_node_named_child(param, 0);  // typed / default / *args
    if (py::kind(param) == Kind::Identifier) plain_.set(fs, fs.text_of(param), true);
  }
  // @triton.jit / @triton.autotune(...): launched as name[grid](...).
  TSNode p = fs.parent(n);
  if (py::kind(p) != Kind::DecoratedDefinition) return;
  uint32_t cnt = ts_node_named_child_count(p);
  for (uint32_t i = 0; i < cnt; ++i) {
    TSNode d = ts_node_named_child(p, i);
    if (std::string_view(ts_node_type(d)) != "decorator" || ts_node_named_child_count(d) == 0) continue;
    TSNode e = ts_node_named_child(d, 0);
    if (py::kind(e) == Kind::Call) e = py::field(e, py::fields().function);
    if (first_component(fs.dotted(e)) == "triton") triton_kernels_.emplace(name);
  }
}

// A name holding a test is used: where that use decides something is where the test does.
void CudaGates::on_flag_use(TSNode n, FileScan& fs) {
  const Flag* fl = flags_.find(fs, fs.text_of(n));
  if (!fl) return;
  TSNode p = fs.parent(n);
  if (py::kind(p) == Kind::Assignment && ts_node_eq(py::field(p, py::fields().left), n)) {
    flags_.erase(fs, fs.text_of(n));  // rebound: no longer the test
    return;
  }
  if (py::kind(p) == Kind::KeywordArgument && ts_node_eq(py::field(p, py::fields().name), n)) return;  // f(no_cuda=...)
  Flag flag = *fl;
  Site s = climb(n, flag.polarity, fs);
  if (s.kind == Site::Flag && s.flag != fs.text_of(n)) flags_.set(fs, s.flag, {s.polarity, flag.findings});
  else if (s.kind == Site::Branch || s.kind == Site::Passed) gate(s, flag.findings, fs);
}

void CudaGates::note_test(TSNode at, const Finding& f, FileScan& fs) {
  FindingKey key{f.rule, f.location.line, f.location.column};
  Site s = climb(at, 1, fs);
  if (s.kind == Site::Flag) {
    Flag flag{s.polarity, {}};
    if (const Flag* old = flags_.find(fs, s.flag); old && old->polarity == s.polarity) flag = *old;
    flag.findings.push_back(std::move(key));
    flags_.set(fs, s.flag, std::move(flag));
  } else if (s.kind != Site::None) {
    gate(s, {std::move(key)}, fs);
  }
}

// Climbs from a test through what keeps its truth (parentheses, and/or, not, comparisons,
// any()) to what it decides: a branch, a name it is stored in, or a call it is passed to.
CudaGates::Site CudaGates::climb(TSNode from, int polarity, FileScan& fs) const {
  const auto& f = py::fields();
  TSNode cur = from;
  std::vector<TSNode> also;
  for (int guard = 0; guard < 24; ++guard) {  // tests are shallow; FileScan::parent is cheap near the walk
    TSNode p = fs.parent(cur);
    switch (py::kind(p)) {
      case Kind::Parenthesized: break;
      case Kind::BooleanOperator:
        if (TSNode right = py::field(p, f.right); !ts_node_eq(right, cur) && evaluated_for_cuda(p, polarity, fs))
          also.push_back(right);
        break;
      case Kind::NotOperator: polarity = -polarity; break;
      case Kind::Comparison:
        if (negates(p)) polarity = -polarity;
        break;
      case Kind::Attribute:  // torch.cuda -> torch.cuda.is_available
        if (!ts_node_eq(py::field(p, f.object), cur)) return {};
        break;
      case Kind::Comprehension:  // any(t.is_cuda for t in ts)
        if (!ts_node_eq(py::field(p, f.body), cur)) return {};
        break;
      case Kind::Call:
        if (ts_node_eq(py::field(p, f.function), cur) || keeps_truth(p, fs)) break;
        return {Site::Passed, p, polarity, {}, also};
      case Kind::ArgumentList:
      case Kind::KeywordArgument: {
        TSNode call = fs.parent(py::kind(p) == Kind::KeywordArgument ? fs.parent(p) : p);
        if (py::kind(call) != Kind::Call) return {};
        if (py::kind(p) == Kind::KeywordArgument || !keeps_truth(call, fs)) return {Site::Passed, call, polarity, {}, also};
        p = call;
        break;
      }
      case Kind::IfStatement:
      case Kind::ElifClause:
      case Kind::WhileStatement:
        return ts_node_eq(py::field(p, f.condition), cur) ? Site{Site::Branch, p, polarity, {}, also} : Site{};
      case Kind::ConditionalExpression:
        return ts_node_eq(ts_node_named_child(p, 1), cur) ? Site{Site::Branch, p, polarity, {}, also} : Site{};
      case Kind::Assignment: {
        TSNode left = py::field(p, f.left);
        if (!ts_node_eq(py::field(p, f.right), cur) || py::kind(left) != Kind::Identifier) return {};
        return {Site::Flag, {}, polarity, std::string(fs.text_of(left)), also};
      }
      default: return {};
    }
    cur = p;
  }
  return {};
}

// The code a test selects for CUDA: the branch taken when it is true (when it is false, for a
// negated test: the else branches, and what follows an if whose body returns or raises).
void CudaGates::gate(const Site& s, const std::vector<FindingKey>& findings, FileScan& fs) {
  const auto& f = py::fields();
  std::vector<TSNode> region;
  int fallback = 0;
  TSNode n = s.node;
  Kind k = py::kind(n);
  if (k == Kind::IfStatement || k == Kind::ElifClause) {
    TSNode body = py::field(n, f.consequence);
    std::vector<TSNode> others, after;
    if (k == Kind::IfStatement) {
      uint32_t cnt = ts_node_named_child_count(n);
      for (uint32_t i = 0; i < cnt; ++i)
        if (TSNode c = ts_node_named_child(n, i); py::kind(c) == Kind::ElifClause || py::kind(c) == Kind::ElseClause)
          others.push_back(c);
    } else {
      statements_after(n, fs.parent(n), others);
    }
    if (exits(body)) {
      TSNode stmt = k == Kind::IfStatement ? n : fs.parent(n);
      statements_after(stmt, fs.parent(stmt), after);
    }
    if (s.polarity > 0) {
      region = {body};
      fallback = line_of(!others.empty() ? others[0] : !after.empty() ? after[0] : TSNode{});
    } else {
      region = others;
      region.insert(region.end(), after.begin(), after.end());
      fallback = line_of(body);
    }
  } else if (k == Kind::ConditionalExpression) {
    region = {ts_node_named_child(n, s.polarity > 0 ? 0 : 2)};
    fallback = line_of(ts_node_named_child(n, s.polarity > 0 ? 2 : 0));
  } else if (k == Kind::WhileStatement && s.polarity > 0) {
    region = {py::field(n, f.body)};
  } else if (s.kind == Site::Passed) {
    region = {n};
  }
  region.insert(region.end(), s.also.begin(), s.also.end());
  // The branch's own assignments bind before its calls are judged (the walk reaches them later).
  std::vector<TSNode> calls;
  std::vector<Callee> callees;
  int budget = kGateNodes;
  for (TSNode r : region)
    py::any_node(
        r,
        [&](TSNode c) {
          if (--budget < 0) return true;  // stops this walk; the next ones stop at once
          Kind ck = py::kind(c);
          if (ck == Kind::Call) calls.push_back(c);
          else if (ck == Kind::Assignment) bind(c, fs);
          else if (ck == Kind::ImportStatement || ck == Kind::ImportFromStatement) {
            std::string_view mod = fs.text_of(ts_node_named_child(c, 0));
            Says says = cuda_only_chain(module_chain(mod), false, false, fs);
            callees.push_back({std::string(mod), {}, {}, {}, line_of(c), says == Says::Strong, says == Says::Named, false});
          }
          return false;
        },
        1 << 16);
  for (TSNode c : calls) callees.push_back(callee_of(c, fs));
  for (const auto& key : findings) gates_.push_back({key, callees, fallback, s.kind == Site::Passed});
}

CudaGates::Callee CudaGates::callee_of(TSNode call, FileScan& fs, bool with_text) const {
  Callee c;
  TSNode fn = py::field(call, py::fields().function);
  bool based = false;
  auto parts = chain(fn, fs, based);
  if (with_text) c.shown = std::string(fs.text_of(fn).substr(0, 80));
  c.line = line_of(call);
  c.launch = py::kind(fn) == Kind::Subscript;
  if (based) c.base = std::string(parts[0]);
  if (based && parts.size() > 1 && (parts[0] == "self" || parts[0] == "cls")) {
    c.member = std::string(parts[1]);
    auto fn_at = function_key_.find(fs.scope_id);
    c.cls = fn_at != function_key_.end() ? fn_at->second.second : std::string(fs.class_name());
  }
  Says says = cuda_only_chain(parts, based, based && plain_.find(fs, parts[0]), fs);
  c.strong = says == Says::Strong || (based && bound_.find(fs, parts[0]));
  c.named = says == Says::Named;
  return c;
}

// The name a callee has among this file's definitions: "Class.method" for self.method(...),
// else its first name (a function, a class, a module-level global).
std::string CudaGates::key_of(const Callee& c) { return c.member.empty() ? c.base : c.cls + "." + c.member; }

void CudaGates::record_call(TSNode call, FileScan& fs) {
  Callee c = callee_of(call, fs, false);
  if (fs.scope_id != calls_scope_) {  // calls come in runs of one function
    calls_scope_ = fs.scope_id;
    calls_at_ = &calls_[function_key_[fs.scope_id].first];
  }
  Calls& calls = *calls_at_;
  if (c.strong) calls.strong = true;
  else if (c.launch) calls.launches.insert(c.base);
  else if (!c.base.empty() && (!c.member.empty() || !fs.aliases.contains(c.base)))  // imported names are not this file's
    calls.keys[key_of(c)] |= c.named;
}

// Does e refer to CUDA-only code without calling it (`rwkv_cuda_kernel.forward_bf16`,
// `fused_rms_norm_cuda if ok else None`)?
bool CudaGates::cuda_named_ref(TSNode e, FileScan& fs) {
  DepthGuard guard(depth_);
  if (guard.too_deep()) return false;
  e = py::strip_parens(e);
  Kind k = py::kind(e);
  if (k == Kind::ConditionalExpression)
    return cuda_named_ref(ts_node_named_child(e, 0), fs) || cuda_named_ref(ts_node_named_child(e, 2), fs);
  if (k != Kind::Identifier && k != Kind::Attribute) return false;
  bool based = false;
  auto parts = chain(e, fs, based);
  return cuda_only_chain(parts, based, false, fs) != Says::No;
}

// Functions of this file that call CUDA-only code, directly or through each other (a few
// levels: wrappers of wrappers).
std::set<std::string, std::less<>> CudaGates::cuda_only_functions() const {
  std::set<std::string, std::less<>> fns;
  for (const auto& [key, calls] : calls_)
    if (calls.strong || std::any_of(calls.launches.begin(), calls.launches.end(),
                                    [&](const std::string& k) { return triton_kernels_.contains(k); }))
      fns.insert(key);
  for (int round = 0; round < 8; ++round) {
    bool grew = false;
    for (const auto& [key, calls] : calls_) {
      if (fns.contains(key)) continue;
      for (const auto& [callee, named] : calls.keys)
        if (key_cuda_only(callee, named, fns)) {
          fns.insert(key);
          grew = true;
          break;
        }
    }
    if (!grew) break;
  }
  return fns;
}

// A callee known by its key: the file's own definition decides (a function, a method, a class
// with a CUDA-only method); a name the file does not define is judged by what it says.
bool CudaGates::key_cuda_only(std::string_view key, bool named, const std::set<std::string, std::less<>>& fns) const {
  if (loaded_globals_.contains(key) || fns.contains(key)) return true;
  if (defined_.contains(key)) return false;
  auto cls = methods_.find(key);  // RwkvLinearAttention.apply(...)
  if (cls != methods_.end())
    return std::any_of(cls->second.begin(), cls->second.end(), [&](const std::string& m) { return fns.contains(m); });
  return named;
}

bool CudaGates::cuda_only(const Callee& c, const std::set<std::string, std::less<>>& fns) const {
  if (c.strong) return true;
  if (c.launch) return triton_kernels_.contains(c.base);
  return !c.base.empty() ? key_cuda_only(key_of(c), c.named, fns) : c.named;
}

// The test stays as it is (no edits). With an NPU kernel for what the CUDA branch does, the
// finding says to add an NPU branch calling it; without one there is nothing to do, and the
// finding goes (a finding names something the user can do, issue 45). Returns whether it stays.
bool CudaGates::explain(Finding& f, const Gate& g, const Callee& hit) {
  f.edits.clear();
  std::string alt = npu_alternative(hit.shown);
  if (alt.empty()) return false;
  if (f.severity == Severity::Error) f.severity = Severity::Warning;  // nothing breaks: the NPU takes the fallback
  f.message += "; here the test keeps the NPU out of CUDA-only code: the branch it selects calls `" + hit.shown +
               "` (line " + std::to_string(hit.line) + ")" +
               (hit.launch ? ", a triton kernel" : !hit.strong && !hit.named ? ", which runs CUDA-only code" : "") +
               ", so a test rewritten for the NPU would run that code on NPU tensors and fail";
  std::string where = g.passed ? "its value keeps `" + hit.shown + "` off its CUDA path"
                               : "the other branch" +
                                     (g.fallback_line ? " (line " + std::to_string(g.fallback_line) + ")" : std::string()) +
                                     " runs";
  f.fix = advice("CUDA", "gate_fix", {{"where", where}, {"alternative", alt}});
  return true;
}

void CudaGates::withhold(FileScan& fs) {
  if (gates_.empty()) return;
  auto fns = cuda_only_functions();
  std::map<std::tuple<std::string_view, int, int>, Finding*> fixable;
  for (auto& f : fs.findings)
    if (f.fixable()) fixable.emplace(std::tuple<std::string_view, int, int>{f.rule, f.location.line, f.location.column}, &f);
  std::set<const Finding*> dropped;
  for (const auto& g : gates_) {
    auto at = fixable.find({g.finding.rule, g.finding.line, g.finding.column});
    if (at == fixable.end() || !at->second->fixable()) continue;  // withheld already (one test, two uses)
    auto hit = std::find_if(g.callees.begin(), g.callees.end(), [&](const Callee& c) { return cuda_only(c, fns); });
    if (hit != g.callees.end() && !explain(*at->second, g, *hit)) dropped.insert(at->second);
  }
  if (dropped.empty()) return;
  std::vector<Finding> kept;
  kept.reserve(fs.findings.size() - dropped.size());
  for (auto& f : fs.findings)
    if (!dropped.contains(&f)) kept.push_back(std::move(f));
  fs.findings = std::move(kept);
}

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
