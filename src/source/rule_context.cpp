#include "source/rule_context.hpp"

#include <algorithm>
#ifdef NPUD_HAVE_TREE_SITTER

#include "source/source_rules.hpp"

namespace npud {

std::string FileScan::dotted(TSNode n) const {
  // Walk down the attribute chain collecting names right to left.
  std::vector<std::string_view> parts;
  const auto& f = py::fields();
  while (true) {
    if (parts.size() >= size_t(py::kMaxChainLinks)) return {};  // no API name is this long
    py::Kind k = py::kind(n);
    if (k == py::Kind::Identifier) {
      parts.push_back(text_of(n));
      break;
    }
    if (k != py::Kind::Attribute) return {};
    TSNode attr = py::field(n, f.attribute);
    if (ts_node_is_null(attr)) return {};
    parts.push_back(text_of(attr));
    n = py::field(n, f.object);
    if (ts_node_is_null(n)) return {};
  }
  std::string out;
  auto it = aliases.find(std::string(parts.back()));
  out = it != aliases.end() ? it->second : std::string(parts.back());
  for (size_t i = parts.size() - 1; i-- > 0;) {
    out += '.';
    out += parts[i];
  }
  return out;
}

std::pair<int, int> FileScan::position(TSPoint p, uint32_t byte, int slot) const {
  auto is_lead = [&](uint32_t i) { return (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80; };
  ColumnMemo& m = column_memo_[slot];
  uint32_t line_start = byte - p.column;
  byte = std::min<uint32_t>(byte, uint32_t(text.size()));
  if (line_start != m.line_start) m = {line_start, line_start, 1};
  for (; m.byte < byte; ++m.byte) m.column += is_lead(m.byte);
  for (; m.byte > byte; --m.byte) m.column -= is_lead(m.byte - 1);
  return {int(p.row) + 1, m.column};
}

std::vector<Finding> FileScan::take_since(size_t mark) {
  std::vector<Finding> out(std::make_move_iterator(findings.begin() + long(mark)),
                               std::make_move_iterator(findings.end()));
  findings.resize(mark);
  return out;
}

bool FileScan::is_torch(TSNode n) const {
  if (py::kind(n) != py::Kind::Identifier) return false;
  auto it = aliases.find(std::string(text_of(n)));
  return it != aliases.end() ? it->second == "torch" : text_of(n) == "torch";
}

std::vector<std::pair<TSNode, TSNode>> FileScan::assigned(TSNode assignment) const {
  if (ts_node_is_null(last_assignment_) || !ts_node_eq(last_assignment_, assignment)) {
    last_assigned_ = py::assigned(assignment);
    last_assignment_ = assignment;
  }
  return last_assigned_;
}

std::vector<std::pair<std::string_view, TSNode>> FileScan::names_bound(TSNode assignment) const {
  std::vector<std::pair<std::string_view, TSNode>> out;
  for (auto [target, value] : assigned(assignment))
    if (py::kind(target) == py::Kind::Identifier) out.emplace_back(text_of(target), value);
  return out;
}

std::string_view FileScan::class_name() const {
  for (size_t i = ancestors.size(); i-- > 0;)
    if (py::kind(ancestors[i]) == py::Kind::ClassDefinition) return text_of(py::field(ancestors[i], py::fields().name));
  return {};
}

TSNode FileScan::parent(TSNode n) const {
  // Rules ask for the parent of the visited node, of one a few levels up, or of the last
  // answer (a climb). ts_node_parent descends from the root: O(depth) per call.
  auto answer = [&](size_t i) {
    parent_hint_ = i ? i - 1 : 0;
    return i ? ancestors[i - 1] : TSNode{};
  };
  if (parent_hint_ < ancestors.size() && ts_node_eq(ancestors[parent_hint_], n)) return answer(parent_hint_);
  size_t stop = ancestors.size() > 32 ? ancestors.size() - 32 : 0;
  for (size_t i = ancestors.size(); i-- > stop;)
    if (ts_node_eq(ancestors[i], n)) return answer(i);
  return ts_node_parent(n);
}

Finding& FileScan::report(std::string_view rule, Severity sev, const NodeSpan& at, std::string message,
                              std::string fix) {
  Finding f;
  f.rule = std::string(rule);
  f.severity = sev;
  auto [l, c] = position(at.start, at.start_byte);
  auto [el, ec] = position(at.end, at.end_byte, 1);
  f.location.line = l;
  f.location.column = c;
  f.location.end_line = el;
  f.location.end_column = ec;
  f.message = std::move(message);
  f.fix = std::move(fix);
  findings.push_back(std::move(f));
  return findings.back();
}

namespace {

bool contains_any(std::string_view text, std::initializer_list<std::string_view> needles) {
  for (std::string_view n : needles)
    if (text.find(n) != std::string_view::npos) return true;
  return false;
}

bool always(std::string_view) { return true; }

// Text every CUDA rule needs to fire: a CUDA device string, .cuda(), torch.cuda / backends.cudnn,
// NCCL, TF32 switches, or NPU APIs without `import torch_npu` (CUDA006); any case.
bool may_have_cuda(std::string_view text) {
  return contains_any(text, {"cud", "CUD", "Cud", "nccl", "NCCL", "Nccl", "npu", "NPU", "tf32", "TF32"});
}

bool may_have_autocast(std::string_view text) { return text.find("autocast") != std::string_view::npos; }

bool may_have_view(std::string_view text) {
  return contains_any(text, {"transpose", "permute", "swapaxes", "swapdims", ".T", ".H", ".mT", ".mH", ".t("});
}

// One rule file: the ids it reports, and a cheap test of a file's text that is false only where
// none of them can fire (then, with no other rule selected, the file is not parsed at all).
struct SourceRuleEntry {
  std::unique_ptr<SourceRule> (*make)();
  std::initializer_list<std::string_view> ids;
  bool (*may_fire)(std::string_view text);
};

const SourceRuleEntry kEntries[] = {
    {make_cuda_rules, {"CUDA001", "CUDA002", "CUDA003", "CUDA004", "CUDA005", "CUDA006", "CUDA007"}, may_have_cuda},
    {make_sync_rule, {"SYNC101"}, always},
    {make_contig_rule, {"CONTIG101"}, may_have_view},
    {make_fused_rules, {"FUSE101", "FUSE102", "FUSE103", "FUSE104", "FUSE105"}, always},
    {make_amp_rule, {"AMP101"}, may_have_autocast},
    {make_bce_in_autocast_rule, {"AMP102"}, may_have_autocast},
    {make_api_rules, {"API101", "API102"}, always},
};

}  // namespace

std::vector<std::unique_ptr<SourceRule>> make_source_rule_instances(const RuleFilter& filter, std::string_view text) {
  std::vector<std::unique_ptr<SourceRule>> r;
  for (const SourceRuleEntry& e : kEntries) {
    bool wanted = std::any_of(e.ids.begin(), e.ids.end(), [&](std::string_view id) { return filter.enabled(id); });
    if (wanted && e.may_fire(text)) r.push_back(e.make());
  }
  return r;
}

namespace py {

std::vector<TSNode> positional_args(TSNode call) {
  std::vector<TSNode> out;
  TSNode args = field(call, fields().arguments);
  if (ts_node_is_null(args) || kind(args) != Kind::ArgumentList) return out;
  uint32_t n = ts_node_named_child_count(args);
  for (uint32_t i = 0; i < n; ++i) {
    TSNode a = ts_node_named_child(args, i);
    Kind k = kind(a);
    if (k == Kind::KeywordArgument || k == Kind::Comment) continue;
    // *args / **kwargs are list_splat / dictionary_splat: not positional values we know.
    std::string_view t = ts_node_type(a);
    if (t == "list_splat" || t == "dictionary_splat") continue;
    out.push_back(a);
  }
  return out;
}

TSNode keyword_arg(std::string_view src, TSNode call, std::string_view name) {
  TSNode args = field(call, fields().arguments);
  if (!ts_node_is_null(args) && kind(args) == Kind::ArgumentList) {
    uint32_t n = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode a = ts_node_named_child(args, i);
      if (kind(a) != Kind::KeywordArgument) continue;
      TSNode nm = field(a, fields().name);
      if (!ts_node_is_null(nm) && text_of(src, nm) == name) return field(a, fields().value);
    }
  }
  return TSNode{};
}

uint32_t string_content_start(std::string_view src, TSNode str) {
  uint32_t s = ts_node_start_byte(str);
  uint32_t e = ts_node_end_byte(str);
  while (s < e && src[s] != '\'' && src[s] != '"') ++s;  // prefix letters
  char q = s < e ? src[s] : '"';
  uint32_t nq = 0;
  while (s < e && src[s] == q && nq < 3) {
    ++s;
    ++nq;
  }
  if (nq == 2) --s;  // "" is an empty string, not an opening triple quote
  return s;
}

std::string_view plain_string(std::string_view src, TSNode str, bool& ok) {
  ok = false;
  std::string_view t = text_of(src, str);
  size_t q = t.find_first_of("'\"");
  if (q == std::string_view::npos) return {};
  for (size_t i = 0; i < q; ++i) {
    char c = char(std::tolower(static_cast<unsigned char>(t[i])));
    if (c != 'r' && c != 'u') return {};  // f-strings, bytes
  }
  uint32_t cs = string_content_start(src, str) - ts_node_start_byte(str);
  size_t quotes = cs - q;
  if (t.size() < cs + quotes) return {};
  std::string_view content = t.substr(cs, t.size() - cs - quotes);
  if (content.find('\\') != std::string_view::npos) return {};
  ok = true;
  return content;
}

bool any_node(TSNode n, const std::function<bool(TSNode)>& pred, int budget) {
  TSTreeCursor c = ts_tree_cursor_new(n);
  bool found = false;
  int depth = 0;
  while (budget-- > 0) {
    if (pred(ts_tree_cursor_current_node(&c))) {
      found = true;
      break;
    }
    if (ts_tree_cursor_goto_first_child(&c)) {
      ++depth;
      continue;
    }
    bool moved = false;
    while (depth > 0 && !(moved = ts_tree_cursor_goto_next_sibling(&c))) {
      ts_tree_cursor_goto_parent(&c);
      --depth;
    }
    if (!moved) break;
  }
  ts_tree_cursor_delete(&c);
  return found;
}

bool subtree_has(TSNode n, Kind k, std::string_view src, std::string_view op) {
  return any_node(n, [&](TSNode cur) { return kind(cur) == k && (op.empty() || binary_op(src, cur) == op); });
}

std::string_view binary_op(std::string_view src, TSNode n) {
  TSNode o = field(n, fields().operator_);
  return ts_node_is_null(o) ? std::string_view() : text_of(src, o);
}

TSNode strip_parens(TSNode e) {
  for (int i = 0; i < kMaxChainLinks && kind(e) == Kind::Parenthesized && ts_node_named_child_count(e) == 1; ++i)
    e = ts_node_named_child(e, 0);
  return e;
}

bool int_literal(std::string_view src, TSNode e, long& v) {
  e = strip_parens(e);
  bool minus = false;
  if (kind(e) == Kind::UnaryOperator && text_of(src, field(e, fields().operator_)) == "-") {
    minus = true;
    e = strip_parens(field(e, fields().argument));
  }
  if (kind(e) != Kind::Integer) return false;
  std::string_view t = text_of(src, e);
  long x = 0;
  for (char c : t) {
    if (c < '0' || c > '9' || x > 1'000'000) return false;  // hex, underscores, huge: not a dim
    x = x * 10 + (c - '0');
  }
  v = minus ? -x : x;
  return !t.empty();
}

std::string_view method_name(std::string_view src, TSNode call) {
  TSNode fn = field(call, fields().function);
  return kind(fn) == Kind::Attribute ? text_of(src, field(fn, fields().attribute)) : std::string_view();
}

TSNode method_object(TSNode call) {
  TSNode fn = field(call, fields().function);
  return kind(fn) == Kind::Attribute ? field(fn, fields().object) : TSNode{};
}

std::vector<TSNode> elements(TSNode e) {
  Kind k = kind(e);
  if (k != Kind::Tuple && k != Kind::List && k != Kind::PatternList && k != Kind::ExpressionList) return {e};
  std::vector<TSNode> out;
  uint32_t n = ts_node_named_child_count(e);
  for (uint32_t i = 0; i < n; ++i)
    if (TSNode c = ts_node_named_child(e, i); kind(c) != Kind::Comment) out.push_back(c);
  return out;
}

std::vector<std::pair<TSNode, TSNode>> assigned(TSNode assignment) {
  TSNode left = field(assignment, fields().left), right = field(assignment, fields().right);
  if (ts_node_is_null(left) || ts_node_is_null(right)) return {};
  std::vector<TSNode> targets = elements(left), values = elements(right);
  if (kind(left) == Kind::Identifier || kind(left) == Kind::Attribute || kind(left) == Kind::Subscript)
    values = {right};
  std::vector<std::pair<TSNode, TSNode>> out;
  for (size_t i = 0; i < targets.size(); ++i)
    out.emplace_back(targets[i], values.size() == targets.size() ? values[i] : TSNode{});
  return out;
}

}  // namespace py
}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
