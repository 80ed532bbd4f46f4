// Thin C++ layer over the tree-sitter runtime and the tree-sitter-python grammar: owned
// parser/tree handles, node kinds as a small enum (looked up by symbol, so aliased symbols
// count), and field ids. Internal to src/source (the tree-sitter headers stay out of the
// public headers).
#pragma once
#ifdef NPUD_HAVE_TREE_SITTER

#include <tree_sitter/api.h>

#include <cstdint>
#include <memory>
#include <string_view>

namespace npud::py {

enum class Kind : uint8_t {
  Other,
  Module,
  Call,
  Attribute,
  Identifier,
  String,
  ArgumentList,
  KeywordArgument,
  BinaryOperator,
  UnaryOperator,
  Comparison,
  Assignment,
  ConditionalExpression,
  ForStatement,
  WhileStatement,
  Block,
  FunctionDefinition,
  ImportStatement,
  ImportFromStatement,
  AliasedImport,
  DottedName,
  Comment,
  Tuple,
  List,
  Parenthesized,
  Subscript,
  Interpolation,
  Comprehension,  // list / set / dict comprehension, generator expression
  IfStatement,
  ElifClause,
  ElseClause,
  ClassDefinition,
  DecoratedDefinition,
  ReturnStatement,
  RaiseStatement,
  NotOperator,
  BooleanOperator,
  PatternList,     // `a, b` on the left of `=` (also tuple_pattern)
  ExpressionList,  // `e1, e2` on the right of `=`
  ListSplat,       // `*xs`
  Slice,
  Integer,
  Error,
};

const TSLanguage* language();
// Kind::Other for a null node (a field the syntax leaves out).
Kind kind(TSNode n);

struct Fields {
  TSFieldId function, arguments, object, attribute, left, right, operator_, body, name, value,
      alias, module_name, argument, condition, consequence, subscript, parameters;
};
const Fields& fields();

struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};
using TreePtr = std::unique_ptr<TSTree, TreeDeleter>;

// Parses UTF-8 text; never returns null for valid input (syntax errors become ERROR nodes).
// One parser per thread, reused. With `range`, only that part of text is parsed (nodes keep
// their offsets and points in the whole text).
TreePtr parse(std::string_view text, const TSRange* range = nullptr);

// Parses in a child process and says whether the child finished. The tree-sitter runtime
// (Debian's 0.20.7) corrupts its heap recovering from a syntax error 65,536 parser-stack
// levels down (a 60,000-target chained assignment or 70,000 open parentheses, then an error;
// issue 31 F-10): the scan calls this first for a piece holding a logical line long enough to
// nest that deep, and reports the piece instead of dying with it. True when fork() fails.
bool parse_survives(std::string_view text, const TSRange* range = nullptr);

inline std::string_view text_of(std::string_view src, TSNode n) {
  uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
  return src.substr(s, e - s);
}
inline TSNode field(TSNode n, TSFieldId f) { return ts_node_child_by_field_id(n, f); }

}  // namespace npud::py

#endif  // NPUD_HAVE_TREE_SITTER
