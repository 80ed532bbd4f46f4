#include "source/statement_chunks.hpp"

#include <algorithm>

namespace npud {

namespace {

bool starts_with_word(std::string_view s, std::string_view w) {
  if (!s.starts_with(w)) return false;
  if (s.size() == w.size()) return true;
  char c = s[w.size()];
  return !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
}

// A line at column 0 that may begin a piece: code (not blank, not a comment) that does not
// continue the statement above.
bool opens_statement(std::string_view rest) {
  if (rest.empty()) return false;
  char c = rest[0];
  if (c == ' ' || c == '\t' || c == '\f' || c == '\n' || c == '\r' || c == '#') return false;
  for (std::string_view w : {"else", "elif", "except", "finally", "case"})
    if (starts_with_word(rest, w)) return false;
  return true;
}

}  // namespace

std::vector<StatementChunk> statement_chunks(std::string_view text, size_t target) {
  std::vector<StatementChunk> out{{0, uint32_t(text.size()), 0}};
  size_t n = text.size(), i = 0;
  size_t logical_start = 0;      // where the logical line being read began
  uint32_t row = 0;
  int depth = 0;                 // open brackets
  bool continued = false;        // the line ended with a backslash
  bool decorator = false;        // the last statement line at column 0 was `@...`
  while (i < n) {
    char c = text[i];
    if (c == '#') {
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    if (c == '\'' || c == '"') {
      bool triple = i + 2 < n && text[i + 1] == c && text[i + 2] == c;
      i += triple ? 3 : 1;
      while (i < n) {
        if (text[i] == '\\') {
          if (i + 1 < n && text[i + 1] == '\n') ++row;
          i += 2;
          continue;
        }
        if (text[i] == '\n') {
          ++row;
          if (!triple) break;  // an unclosed one-line string: the parser will say so
        }
        if (text[i] == c && (!triple || (i + 2 < n && text[i + 1] == c && text[i + 2] == c))) {
          i += triple ? 3 : 1;
          break;
        }
        ++i;
      }
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (c == '\\' && i + 1 < n && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      continued = true;
      i += text[i + 1] == '\r' && i + 2 < n && text[i + 2] == '\n' ? 2 : 1;
      continue;
    }
    if (c != '\n') {
      ++i;
      continue;
    }
    ++row;
    ++i;
    bool joined = continued || depth > 0;
    continued = false;
    if (!joined) {
      out.back().longest_logical_line = std::max(out.back().longest_logical_line, uint32_t(i - logical_start));
      logical_start = i;
    }
    if (joined || i >= n || text.size() <= target) continue;
    std::string_view rest = text.substr(i);
    if (!opens_statement(rest)) continue;
    bool after_decorator = decorator;
    decorator = rest[0] == '@';
    if (after_decorator || i - out.back().start_byte < target) continue;
    out.back().end_byte = uint32_t(i);
    out.push_back({uint32_t(i), uint32_t(n), row});
  }
  out.back().longest_logical_line = std::max(out.back().longest_logical_line, uint32_t(n - logical_start));
  return out;
}

}  // namespace npud
