#include "util/mini_toml.hpp"

#include <fmt/format.h>

namespace npud {
namespace {

class TomlReader {
 public:
  TomlReader(std::string_view text, const std::string& file) : t_(text), file_(file) {
    if (t_.starts_with("\xEF\xBB\xBF")) i_ = line_start_ = 3;   // an editor's byte order mark
  }

  std::vector<TomlTable> read(const std::function<bool(std::string_view)>& wanted) {
    std::vector<TomlTable> out;
    bool reading = wanted("");
    if (reading) out.push_back(TomlTable{"", {1, 1}, {}});
    while (true) {
      skip_space_and_lines();
      if (i_ >= t_.size()) break;
      if (peek() == '[') {
        TomlPos at = here();
        bool array = t_.substr(i_, 2) == "[[";
        advance();
        if (array) advance();
        std::string name = table_name();
        expect(']');
        if (array) expect(']');
        end_of_line();
        reading = wanted(name);
        if (reading && array) fail(at, fmt::format("[[{}]] (an array of tables) is not read here; write [{}]", name, name));
        if (reading) {
          // TOML forbids a table defined twice; reading both would hide which one counts.
          for (const TomlTable& t : out)
            if (t.name == name) fail(at, fmt::format("[{}] is defined twice (first at line {})", name, t.pos.line));
          out.push_back(TomlTable{name, at, {}});
        }
        continue;
      }
      if (!reading) {
        skip_statement();
        continue;
      }
      TomlEntry e;
      e.pos = here();
      e.key = key();
      skip_blank();
      if (peek() == '.') fail(here(), fmt::format("dotted keys ({}.…) are not read here: write a [table]", e.key));
      expect('=');
      skip_blank();
      e.value = value(true);
      end_of_line();
      for (const TomlEntry& before : out.back().entries)   // TOML forbids it; "the last wins" would be a guess
        if (before.key == e.key) fail(e.pos, fmt::format("'{}' is given twice (first at line {})", e.key, before.pos.line));
      out.back().entries.push_back(std::move(e));
    }
    return out;
  }

 private:
  std::string_view t_;
  const std::string& file_;
  size_t i_ = 0, line_start_ = 0;
  int line_ = 1;

  TomlPos here() const { return {line_, int(i_ - line_start_) + 1}; }
  [[noreturn]] void fail(TomlPos p, const std::string& what) const {
    throw TomlError(fmt::format("{}:{}:{}: {}", file_, p.line, p.column, what));
  }
  char peek(size_t ahead = 0) const { return i_ + ahead < t_.size() ? t_[i_ + ahead] : '\0'; }
  void advance() {
    if (i_ >= t_.size()) return;
    if (t_[i_] == '\n') {
      ++line_;
      line_start_ = i_ + 1;
    }
    ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(here(), fmt::format("expected '{}'", c));
    advance();
  }
  void skip_blank() {
    while (peek() == ' ' || peek() == '\t') advance();
  }
  void skip_comment() {
    if (peek() == '#')
      while (i_ < t_.size() && t_[i_] != '\n') advance();
  }
  // Blanks, comments and line ends: between statements, and inside arrays.
  void skip_space_and_lines() {
    while (true) {
      skip_blank();
      skip_comment();
      if (peek() == '\n' || peek() == '\r') advance();
      else return;
    }
  }
  void end_of_line() {
    skip_blank();
    skip_comment();
    if (peek() == '\r') advance();
    if (i_ >= t_.size()) return;
    if (peek() != '\n') fail(here(), "expected the end of the line (one key = value a line)");
    advance();
  }

  static bool bare_key_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  }
  std::string key() {
    if (peek() == '"' || peek() == '\'') return string();
    size_t start = i_;
    while (bare_key_char(peek())) advance();
    if (i_ == start) fail(here(), "expected a key (letters, digits, '-', '_', or a quoted string)");
    return std::string(t_.substr(start, i_ - start));
  }
  std::string table_name() {
    std::string name;
    while (true) {
      skip_blank();
      name += key();
      skip_blank();
      if (peek() != '.') return name;
      advance();
      name += '.';
    }
  }

  // One-line "basic" (with escapes) or 'literal' string.
  std::string string() {
    TomlPos at = here();
    char q = peek();
    if (peek(1) == q && peek(2) == q) fail(at, "multi-line strings are not read here");
    advance();
    std::string out;
    while (true) {
      char c = peek();
      if (i_ >= t_.size() || c == '\n' || c == '\r') fail(at, "the string does not end on its line");
      advance();
      if (c == q) return out;
      if (c != '\\' || q == '\'') {
        out += c;
        continue;
      }
      char e = peek();
      advance();
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        default: fail(at, fmt::format("the escape \\{} is not read here (write the character itself)", e));
      }
    }
  }

  TomlValue value(bool table_allowed) {
    TomlValue v;
    v.pos = here();
    char c = peek();
    if (c == '"' || c == '\'') {
      v.v = string();
    } else if (c == '[') {
      advance();
      TomlStrings items;
      while (true) {
        skip_space_and_lines();
        if (peek() == ']') break;
        if (peek() != '"' && peek() != '\'') fail(here(), "only strings are read in this array");
        items.push_back(string());
        skip_space_and_lines();
        if (peek() == ',') advance();
        else if (peek() != ']') fail(here(), "expected ',' or ']'");
      }
      advance();
      v.v = std::move(items);
    } else if (c == '{' && table_allowed) {
      advance();
      TomlInlineTable items;
      while (true) {
        skip_space_and_lines();
        if (peek() == '}') break;
        std::string k = key();
        skip_blank();
        expect('=');
        skip_blank();
        items.push_back(TomlKeyValue{std::move(k), value(false)});
        skip_space_and_lines();
        if (peek() == ',') advance();
        else if (peek() != '}') fail(here(), "expected ',' or '}'");
      }
      advance();
      v.v = std::move(items);
    } else {
      fail(v.pos, table_allowed ? "npu-doctor's settings are strings, arrays of strings, or tables of those; "
                                  "this value is none of them"
                                : "expected a string or an array of strings");
    }
    return v;
  }

  // In a table nobody asked for: skips one key = value, whatever TOML it holds, tracking
  // strings and brackets only to find where it ends.
  void skip_statement() {
    int depth = 0;
    while (i_ < t_.size()) {
      char c = peek();
      if (c == '\n') {
        advance();
        if (depth == 0) return;
      } else if (c == '#') {
        skip_comment();
      } else if (c == '"' || c == '\'') {
        skip_any_string();
      } else {
        if (c == '[' || c == '{') ++depth;
        else if ((c == ']' || c == '}') && depth > 0) --depth;
        advance();
      }
    }
  }
  void skip_any_string() {
    char q = peek();
    bool triple = peek(1) == q && peek(2) == q;
    for (int k = 0; k < (triple ? 3 : 1); ++k) advance();
    while (i_ < t_.size()) {
      char c = peek();
      if (c == '\\' && q == '"') {
        advance();
        advance();
        continue;
      }
      if (!triple && c == '\n') return;   // malformed; the next line is read afresh
      if (c == q && (!triple || (peek(1) == q && peek(2) == q))) {
        for (int k = 0; k < (triple ? 3 : 1); ++k) advance();
        while (triple && peek() == q) advance();   // """a"""" ends with a quote inside
        return;
      }
      advance();
    }
  }
};

}  // namespace

std::vector<TomlTable> read_toml_tables(std::string_view text, const std::string& file,
                                        const std::function<bool(std::string_view)>& wanted) {
  return TomlReader(text, file).read(wanted);
}

}  // namespace npud
