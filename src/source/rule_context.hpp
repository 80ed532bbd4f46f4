// What a source rule sees while the scanner walks one file's syntax tree once, in source
// order: the node, the enclosing loops and functions, the import aliases seen so far, and a
// report() that turns a node into a ScanFinding. Internal to src/source.
#pragma once
#ifdef NPUD_HAVE_TREE_SITTER

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "knowledge/knowledge.hpp"
#include "source/api_map.hpp"
#include "source/python_tree.hpp"
#include "source/scan_finding.hpp"

namespace npud {

struct FileScan {
  FileScan(std::string_view t, const KnowledgeVersion& v, const ApiMap& a) : text(t), kv(v), api(a) {}

  std::string_view text;
  const KnowledgeVersion& kv;
  const ApiMap& api;
  std::vector<ScanFinding> findings;
  TSNode root{};
  // For the Call node being visited: dotted(function), computed once for all rules.
  std::string call_dotted;

  // Walk state, kept by the scanner.
  int loop_depth = 0;           // for/while bodies and comprehensions around the node
  int scope_id = 0;             // innermost function (0: module level); unique per function
  std::vector<std::string_view> functions;  // enclosing function names, innermost last
  std::unordered_map<std::string, std::string> aliases;  // "F" -> "torch.nn.functional"

  // File-wide facts, filled by the walk.
  bool imports_torch_npu = false;
  bool uses_npu = false;          // torch.npu / .npu() / 'npu' already in the source
  TSNode import_torch{};          // first `import torch` (module level preferred)
  bool has_import_torch = false;
  bool import_torch_top = false;

  std::string_view text_of(TSNode n) const { return py::text_of(text, n); }
  // "torch.cuda.synchronize" for an identifier/attribute chain, with the first name resolved
  // through import aliases; "" for anything else (calls, subscripts inside the chain).
  std::string dotted(TSNode n) const;
  // The name the innermost enclosing function has, "" at module level.
  std::string_view function_name() const { return functions.empty() ? std::string_view() : functions.back(); }

  ScanFinding& report(std::string_view rule, Severity sev, TSNode at, std::string message,
                      std::string fix = {});
  // 1-based line and code-point column of a byte offset.
  std::pair<int, int> position(TSPoint p, uint32_t byte) const;
};

class SourceRule {
 public:
  virtual ~SourceRule() = default;
  virtual void visit(TSNode n, py::Kind k, FileScan& fs) = 0;
  virtual void finish(FileScan&) {}
};

// One instance of every rule, for one file (rules keep per-file state).
std::vector<std::unique_ptr<SourceRule>> make_source_rule_instances();

// Factories, one per rule file.
std::unique_ptr<SourceRule> make_cuda_rules();
std::unique_ptr<SourceRule> make_sync_rule();
std::unique_ptr<SourceRule> make_contig_rule();
std::unique_ptr<SourceRule> make_fused_rules();
std::unique_ptr<SourceRule> make_amp_rule();
std::unique_ptr<SourceRule> make_api_rules();

// Small tree helpers shared by the rules.
namespace py {
// Positional (non-keyword) arguments of a call, in order.
std::vector<TSNode> positional_args(TSNode call);
// The value of keyword argument `name`, or a null node.
TSNode keyword_arg(std::string_view src, TSNode call, std::string_view name);
// A string literal's content when it is a plain (non-f, non-bytes) string without escapes
// or interpolation; sets ok=false otherwise.
std::string_view plain_string(std::string_view src, TSNode str, bool& ok);
// Byte offset where a plain string's content starts (after prefix and quotes).
uint32_t string_content_start(std::string_view src, TSNode str);
// Is there a node of kind k in the subtree (depth-first, bounded)?
bool subtree_has(TSNode n, Kind k, std::string_view src = {}, std::string_view op = {});
// For `binary_operator`: the operator text ("@", "*", "-").
std::string_view binary_op(std::string_view src, TSNode n);
}  // namespace py

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
