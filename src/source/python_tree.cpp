#include "source/python_tree.hpp"
#ifdef NPUD_HAVE_TREE_SITTER

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern "C" const TSLanguage* tree_sitter_python(void);
// Present in sanitizer builds (the fuzzers set one that saves the input as a crash).
extern "C" void __sanitizer_set_death_callback(void (*)(void)) __attribute__((weak));

namespace npud::py {
namespace {

struct KindTable {
  std::vector<Kind> by_symbol;
  KindTable() {
    const TSLanguage* lang = tree_sitter_python();
    uint32_t n = ts_language_symbol_count(lang);
    by_symbol.assign(n, Kind::Other);
    struct Name {
      const char* name;
      Kind kind;
    };
    static const Name names[] = {
        {"module", Kind::Module},
        {"call", Kind::Call},
        {"attribute", Kind::Attribute},
        {"identifier", Kind::Identifier},
        {"string", Kind::String},
        {"argument_list", Kind::ArgumentList},
        {"keyword_argument", Kind::KeywordArgument},
        {"binary_operator", Kind::BinaryOperator},
        {"unary_operator", Kind::UnaryOperator},
        {"comparison_operator", Kind::Comparison},
        {"assignment", Kind::Assignment},
        {"conditional_expression", Kind::ConditionalExpression},
        {"for_statement", Kind::ForStatement},
        {"while_statement", Kind::WhileStatement},
        {"block", Kind::Block},
        {"function_definition", Kind::FunctionDefinition},
        {"import_statement", Kind::ImportStatement},
        {"import_from_statement", Kind::ImportFromStatement},
        {"aliased_import", Kind::AliasedImport},
        {"dotted_name", Kind::DottedName},
        {"comment", Kind::Comment},
        {"tuple", Kind::Tuple},
        {"list", Kind::List},
        {"parenthesized_expression", Kind::Parenthesized},
        {"subscript", Kind::Subscript},
        {"interpolation", Kind::Interpolation},
        {"list_comprehension", Kind::Comprehension},
        {"set_comprehension", Kind::Comprehension},
        {"dictionary_comprehension", Kind::Comprehension},
        {"generator_expression", Kind::Comprehension},
        {"if_statement", Kind::IfStatement},
        {"elif_clause", Kind::ElifClause},
        {"else_clause", Kind::ElseClause},
        {"class_definition", Kind::ClassDefinition},
        {"decorated_definition", Kind::DecoratedDefinition},
        {"return_statement", Kind::ReturnStatement},
        {"raise_statement", Kind::RaiseStatement},
        {"not_operator", Kind::NotOperator},
        {"boolean_operator", Kind::BooleanOperator},
        {"pattern_list", Kind::PatternList},
        {"tuple_pattern", Kind::PatternList},
        {"expression_list", Kind::ExpressionList},
        {"list_splat", Kind::ListSplat},
        {"slice", Kind::Slice},
        {"integer", Kind::Integer},
        {"ERROR", Kind::Error},
    };
    for (uint32_t s = 0; s < n; ++s) {
      if (ts_language_symbol_type(lang, TSSymbol(s)) != TSSymbolTypeRegular) continue;
      const char* sn = ts_language_symbol_name(lang, TSSymbol(s));
      for (const Name& nm : names)
        if (std::strcmp(sn, nm.name) == 0) by_symbol[s] = nm.kind;
    }
    // ERROR is a reserved symbol (0xFFFF), outside the table.
  }
};

const KindTable& kinds() {
  static const KindTable t;
  return t;
}

TSFieldId field_id(const char* name) {
  TSFieldId id = ts_language_field_id_for_name(tree_sitter_python(), name, uint32_t(std::strlen(name)));
  if (id == 0) throw std::logic_error(std::string("tree-sitter-python has no field ") + name);
  return id;
}

struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};

}  // namespace

const TSLanguage* language() { return tree_sitter_python(); }

Kind kind(TSNode n) {
  if (ts_node_is_null(n)) return Kind::Other;  // a missing field (`x: int` has no right side)
  TSSymbol s = ts_node_symbol(n);
  if (s == TSSymbol(-1)) return Kind::Error;
  const auto& t = kinds().by_symbol;
  return s < t.size() ? t[s] : Kind::Other;
}

const Fields& fields() {
  static const Fields f{field_id("function"), field_id("arguments"), field_id("object"),
                        field_id("attribute"), field_id("left"), field_id("right"),
                        field_id("operator"), field_id("body"), field_id("name"),
                        field_id("value"), field_id("alias"), field_id("module_name"),
                        field_id("argument"), field_id("condition"), field_id("consequence"),
                        field_id("subscript"), field_id("parameters")};
  return f;
}

TreePtr parse(std::string_view text, const TSRange* range) {
  thread_local std::unique_ptr<TSParser, ParserDeleter> parser;
  if (!parser) {
    parser.reset(ts_parser_new());
    if (!ts_parser_set_language(parser.get(), tree_sitter_python()))
      throw std::runtime_error("tree-sitter runtime rejects the Python grammar (ABI mismatch)");
  }
  if (!ts_parser_set_included_ranges(parser.get(), range, range ? 1 : 0))
    throw std::runtime_error("tree-sitter rejected a parse range");
  TSTree* t = ts_parser_parse_string(parser.get(), nullptr, text.data(), uint32_t(text.size()));
  if (!t) throw std::runtime_error("tree-sitter failed to parse");
  return TreePtr(t);
}

bool parse_survives(std::string_view text, const TSRange* range) {
  pid_t child = fork();
  if (child < 0) return true;  // no process to spare: parse in this one, as before
  if (child == 0) {
    // Only this thread exists here; glibc's malloc is usable after fork. A crash here must
    // neither print glibc's message on the user's terminal nor leave a core file.
    // Handlers inherited from a fuzzer or sanitizer would report the parent's input as a crash.
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    if (int null = open("/dev/null", O_WRONLY); null >= 0) dup2(null, STDERR_FILENO);
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE}) signal(sig, SIG_DFL);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(nullptr);
    parse(text, range);
    _exit(0);
  }
  // A child that hangs is a failure too, not a hung scan: 60 s plus 1 s per MB of text
  // (tree-sitter parses ~10 MB/s).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60 + text.size() / 1000000);
  auto pause = std::chrono::microseconds(200);
  int status = 0;
  while (true) {
    pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (done < 0 && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(child, SIGKILL);
      while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      return false;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

}  // namespace npud::py

#endif  // NPUD_HAVE_TREE_SITTER
