#include "util/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "util/text.hpp"

namespace npud {

size_t terminal_width(int fd, size_t fallback) {
  if (const char* env = std::getenv("COLUMNS"); env && *env) {
    if (auto n = parse_int(env); n && *n >= 20 && *n <= 10000) return size_t(*n);
  }
  struct winsize ws {};
  if (::isatty(fd) && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return fallback;
}

size_t display_width(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

namespace {

// The byte length of the first `columns` characters of `s`.
size_t bytes_of_columns(std::string_view s, size_t columns) {
  size_t i = 0;
  for (size_t seen = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (seen++ == columns) break;
  }
  return i;
}

// The words of one line of text: runs without blanks, a `backquoted span` (blanks included)
// counting as part of its word.
std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    if (i == line.size()) break;
    size_t start = i;
    bool quoted = false;
    for (; i < line.size() && (quoted || line[i] != ' '); ++i)
      if (line[i] == '`') quoted = !quoted;
    out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

std::string cut_to_width(std::string_view s, size_t width) {
  if (display_width(s) <= width) return std::string(s);
  if (width <= 3) return std::string(s.substr(0, bytes_of_columns(s, width)));
  return std::string(s.substr(0, bytes_of_columns(s, width - 3))) + "...";
}

std::string wrap_text(std::string_view text, size_t width, size_t first_column, size_t indent) {
  if (indent + 10 > width) indent = width > 10 ? width - 10 : 0;   // room for words on every line
  std::string out;
  size_t column = first_column;
  bool line_has_words = false;
  auto new_line = [&] {
    out += '\n';
    out.append(indent, ' ');
    column = indent;
    line_has_words = false;
  };
  bool first_line = true;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (!first_line) new_line();
    first_line = false;
    for (std::string_view word : words_of(text.substr(start, end - start))) {
      size_t w = display_width(word);
      if (line_has_words && column + 1 + w > width) new_line();
      else if (!line_has_words && column > indent && column + w > width) new_line();   // after a long left column
      if (line_has_words) out += ' ', ++column;
      // A word wider than a whole line (a long path): broken at the line's end.
      while (column + w > width && width > column) {
        size_t take = bytes_of_columns(word, width - column);
        out.append(word.substr(0, take));
        word.remove_prefix(take);
        w = display_width(word);
        new_line();
      }
      out.append(word);
      column += w;
      line_has_words = true;
    }
    start = end + 1;
  }
  return out;
}

}  // namespace npud
