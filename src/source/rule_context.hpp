// What a source rule sees while the scanner walks one file's syntax tree once, in source
// order: the node, the enclosing loops and functions, the import aliases seen so far, and a
// report() that turns a node into a Finding. Internal to src/source.
#pragma once
#ifdef NPUD_HAVE_TREE_SITTER

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "knowledge/knowledge.hpp"
#include "source/api_map.hpp"
#include "source/python_tree.hpp"
#include "model/finding.hpp"
#include "model/rule_filter.hpp"

namespace npud {

// Where a node was, kept after its syntax tree is gone: large files are parsed one piece of
// statements at a time (statement_chunks.hpp), so what a rule reports at finish() is a span.
struct NodeSpan {
  TSPoint start{}, end{};
  uint32_t start_byte = 0, end_byte = 0;
  static NodeSpan of(TSNode n) {
    return {ts_node_start_point(n), ts_node_end_point(n), ts_node_start_byte(n), ts_node_end_byte(n)};
  }
};

struct FileScan {
  FileScan(std::string_view t, const KnowledgeVersion& v, const ApiMap& a) : text(t), kv(v), api(a) {}

  std::string_view text;
  const KnowledgeVersion& kv;
  const ApiMap& api;
  std::vector<Finding> findings;
  TSNode root{};                // the root of the piece being walked (null at finish())
  // For the Call node being visited: dotted(function), computed once for all rules.
  std::string call_dotted;

  // Walk state, kept by the scanner.
  int loop_depth = 0;           // for/while bodies and comprehensions around the node
  int scope_id = 0;             // innermost function (0: module level); unique per function
  int scopes_seen = 0;          // functions entered so far (the next scope_id)
  std::vector<std::string_view> functions;  // enclosing function names, innermost last
  std::unordered_map<std::string, std::string> aliases;  // "F" -> "torch.nn.functional"
  std::vector<TSNode> ancestors;  // the node being visited and its ancestors, root first

  // File-wide facts, filled by the walk.
  bool imports_torch_npu = false;
  bool uses_npu = false;          // torch.npu / .npu() / 'npu' already in the source
  NodeSpan import_torch;          // first `import torch` (module level preferred)
  NodeSpan first_statement;       // the file's first statement (the module when it has none)
  bool has_import_torch = false;
  bool import_torch_top = false;
  std::string_view newline = "\n";  // the file's first line end: "\n", "\r\n" or "\r"

  std::string_view text_of(TSNode n) const { return py::text_of(text, n); }
  // The parent of n. ts_node_parent climbs down from the root (O(depth)), which made a scan of
  // deep call chains quadratic; near the walk's current node this is a lookup.
  TSNode parent(TSNode n) const;
  // How deep the walk goes: below this many levels it reports PARSE001 once and skips the
  // subtree. CPython's own compiler gives up near this nesting (RecursionError; 200 levels of
  // brackets); here the bound keeps every per-node climb and descent a constant.
  static constexpr size_t kMaxNesting = 1000;
  // "torch.cuda.synchronize" for an identifier/attribute chain, with the first name resolved
  // through import aliases; "" for anything else (calls, subscripts inside the chain).
  std::string dotted(TSNode n) const;
  // Is n the torch module's name (`torch`, or an alias of it)? Cheaper than dotted(n) == "torch".
  bool is_torch(TSNode n) const;
  // dotted() of what a call calls.
  std::string call_dotted_of(TSNode call) const { return dotted(py::field(call, py::fields().function)); }
  // The name the innermost enclosing function has, "" at module level.
  std::string_view function_name() const { return functions.empty() ? std::string_view() : functions.back(); }
  // The name of the innermost class around the node being visited, "" outside classes.
  std::string_view class_name() const;
  // py::assigned of an assignment, and the same for the plain names it binds (not `self.x =
  // ...`, not `x[i] = ...`). Every rule that follows names asks about
  // the assignment being walked in turn: the answer is kept for the last one asked about.
  std::vector<std::pair<TSNode, TSNode>> assigned(TSNode assignment) const;
  std::vector<std::pair<std::string_view, TSNode>> names_bound(TSNode assignment) const;
  // Forgets the kept answer: its nodes die with the syntax tree of the piece walked.
  void forget_assignment() { last_assignment_ = {}; }

  Finding& report(std::string_view rule, Severity sev, TSNode at, std::string message,
                      std::string fix = {}) {
    return report(rule, sev, NodeSpan::of(at), std::move(message), std::move(fix));
  }
  Finding& report(std::string_view rule, Severity sev, const NodeSpan& at, std::string message,
                      std::string fix = {});
  // Moves the findings reported since `mark` (a findings.size()) out: a rule that can only
  // decide at finish() renders them while their tree exists and keeps them until then.
  std::vector<Finding> take_since(size_t mark);
  // 1-based line and code-point column of a byte offset. `slot` 0 serves start offsets, 1 end
  // offsets: each continues from its last offset on the same line, forwards or backwards, so
  // the columns of nested calls on one long line cost the distance moved, not the line length.
  std::pair<int, int> position(TSPoint p, uint32_t byte, int slot = 0) const;

 private:
  struct ColumnMemo {
    uint32_t line_start = UINT32_MAX, byte = 0;
    int column = 1;
  };
  mutable ColumnMemo column_memo_[2];
  mutable TSNode last_assignment_{};
  // ancestors[parent_hint_] was the last parent() answer: a climb up a chain asks for the
  // parent of that one next, which makes every step of the climb a lookup.
  mutable size_t parent_hint_ = 0;
  mutable std::vector<std::pair<TSNode, TSNode>> last_assigned_;
};

// What a rule learned about the local names of the function being walked (`name = ...`), keyed
// by function so that a nested def neither sees nor wipes its outer function's names. Lookups
// take no allocation: rules ask about every identifier they meet.
template <class T>
class LocalNames {
 public:
  const T* find(const FileScan& fs, std::string_view name) const {
    auto scope = names_.find(fs.scope_id);
    if (scope == names_.end()) return nullptr;
    auto it = scope->second.find(name);
    return it == scope->second.end() ? nullptr : &it->second;
  }
  void set(const FileScan& fs, std::string_view name, T v) {
    auto& scope = names_[fs.scope_id];
    auto it = scope.find(name);
    if (it != scope.end()) it->second = std::move(v);
    else scope.emplace(std::string(name), std::move(v));
  }
  void erase(const FileScan& fs, std::string_view name) {
    auto scope = names_.find(fs.scope_id);
    if (scope == names_.end()) return;
    if (auto it = scope->second.find(name); it != scope->second.end()) scope->second.erase(it);
  }
  // Nothing known in the function being walked.
  bool empty(const FileScan& fs) const {
    auto scope = names_.find(fs.scope_id);
    return scope == names_.end() || scope->second.empty();
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<int, std::unordered_map<std::string, T, Hash, std::equal_to<>>> names_;
};

// Bounds a rule's recursion through an expression: machine-made chains (`x.t().t()...`, `a * b
// * ...` 100,000 long) must not overflow the stack, and patterns are a few levels deep.
//   DepthGuard guard(depth_);
//   if (guard.too_deep()) return {};
class DepthGuard {
 public:
  explicit DepthGuard(int& depth) : depth_(depth) { ++depth_; }
  ~DepthGuard() { --depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
  bool too_deep() const { return depth_ > 48; }

 private:
  int& depth_;
};

class SourceRule {
 public:
  virtual ~SourceRule() = default;
  virtual void visit(TSNode n, py::Kind k, FileScan& fs) = 0;
  // After the walk has visited an assignment's values: a rule that follows names binds them
  // here, so `x = x * y` reads the old x while its right side is visited. Assignments only.
  virtual void leave(TSNode, py::Kind, FileScan&) {}
  virtual void finish(FileScan&) {}
};

// One instance of each rule file, for one file (rules keep per-file state): only those with a
// rule `filter` enables whose trigger text occurs in `text` (rules not selected never run).
std::vector<std::unique_ptr<SourceRule>> make_source_rule_instances(const RuleFilter& filter, std::string_view text);

// Factories, one per rule file.
std::unique_ptr<SourceRule> make_cuda_rules();
std::unique_ptr<SourceRule> make_sync_rule();
std::unique_ptr<SourceRule> make_contig_rule();
std::unique_ptr<SourceRule> make_fused_rules();
std::unique_ptr<SourceRule> make_amp_rule();
std::unique_ptr<SourceRule> make_bce_in_autocast_rule();
std::unique_ptr<SourceRule> make_api_rules();

// Small tree helpers shared by the rules.
namespace py {
// Positional (non-keyword) arguments of a call, in order.
std::vector<TSNode> positional_args(TSNode call);
// The value of keyword argument `name`, or a null node.
TSNode keyword_arg(std::string_view src, TSNode call, std::string_view name);
// Bounds for descents that do not go through the walk (dotted names, parentheses): real
// names and patterns are a few levels deep; a machine-made chain must not cost its length per
// node visited.
inline constexpr int kMaxChainLinks = 64;
// A string literal's content when it is a plain (non-f, non-bytes) string without escapes
// or interpolation; sets ok=false otherwise.
std::string_view plain_string(std::string_view src, TSNode str, bool& ok);
// Byte offset where a plain string's content starts (after prefix and quotes).
uint32_t string_content_start(std::string_view src, TSNode str);
// Is there a node in the subtree of n (n included; depth-first, bounded: patterns are local)
// for which pred is true?
bool any_node(TSNode n, const std::function<bool(TSNode)>& pred, int budget = 4096);
// Is there a node of kind k in the subtree (depth-first, bounded)?
bool subtree_has(TSNode n, Kind k, std::string_view src = {}, std::string_view op = {});
// For `binary_operator`: the operator text ("@", "*", "-").
std::string_view binary_op(std::string_view src, TSNode n);
// e without the parentheses around it.
TSNode strip_parens(TSNode e);
// An integer literal, with an optional minus ("3", "-1"); false for anything else.
bool int_literal(std::string_view src, TSNode e, long& v);
// For a call `obj.m(...)`: "m"; "" when the call's function is not an attribute.
std::string_view method_name(std::string_view src, TSNode call);
// For a call `obj.m(...)`: obj (a null node when the function is not an attribute).
TSNode method_object(TSNode call);
// The elements of a tuple, list, `a, b` pattern or `e1, e2` list; {e} for anything else.
std::vector<TSNode> elements(TSNode e);
// What an assignment binds, pairwise: `a = e` -> {(a, e)}, `a, b = e1, e2` -> {(a, e1), (b, e2)};
// an unpacking `a, b = e` -> {(a, null), (b, null)} (each target gets a part of e).
std::vector<std::pair<TSNode, TSNode>> assigned(TSNode assignment);
}  // namespace py

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
