// Text fitted to the terminal (util/terminal.hpp): --help wrapped to its width, top-problem
// lines cut to it (issue 30).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <sstream>
#include <string>

#include "util/terminal.hpp"

using namespace npud;

namespace {

size_t longest_line(const std::string& s) {
  std::istringstream in(s);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n = std::max(n, display_width(line));
  return n;
}

}  // namespace

TEST(Terminal, WrapKeepsEveryLineInsideTheWidth) {
  std::string text = "exit 1 when a finding has this severity or worse, and print the diff: apply it with "
                     "`patch -d / -p1` in this directory; /a/very/long/path/that/does/not/fit/on/any/line/at/all/x.py";
  for (size_t width : {40u, 80u, 120u}) {
    const size_t column = width >= 60 ? 30 : width / 3;   // as cli/help_format.cpp lays out options
    std::string out = std::string(column, ' ') + wrap_text(text, width, column, column);
    EXPECT_LE(longest_line(out), width) << out;
    EXPECT_NE(out.find("`patch -d / -p1`"), std::string::npos) << out;   // a command stays whole
  }
  EXPECT_EQ(wrap_text("a b\nc", 80, 0, 2), "a b\n  c");   // newlines are kept, then indented
  EXPECT_EQ(wrap_text("aaa bbb", 5, 0, 0), "aaa\nbbb");
}

TEST(Terminal, CutCountsCharactersNotBytes) {
  EXPECT_EQ(cut_to_width("abcdef", 6), "abcdef");
  EXPECT_EQ(cut_to_width("abcdefg", 6), "abc...");
  EXPECT_EQ(cut_to_width("\xC2\xB5\xC2\xB5\xC2\xB5", 3), "\xC2\xB5\xC2\xB5\xC2\xB5");   // three µ
  EXPECT_EQ(cut_to_width("\xC2\xB5\xC2\xB5\xC2\xB5\xC2\xB5x", 4), "\xC2\xB5...");
}

TEST(Terminal, ColumnsEnvironmentWins) {
  const char* old = std::getenv("COLUMNS");
  std::string saved = old ? old : "";
  ::setenv("COLUMNS", "97", 1);
  EXPECT_EQ(terminal_width(-1, 80), 97u);
  ::setenv("COLUMNS", "junk", 1);
  EXPECT_EQ(terminal_width(-1, 80), 80u);   // not a terminal either: the fallback
  if (old) ::setenv("COLUMNS", saved.c_str(), 1);
  else ::unsetenv("COLUMNS");
}
