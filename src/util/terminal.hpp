// The terminal's width, and text wrapped or cut to it: --help and the text reports' one-line
// top problems fit the window they are read in.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace npud {

// Columns of the terminal on `fd`: $COLUMNS when it holds a number from 20 to 10000 (the user's
// say, as in ls and git), else the window size of `fd` when it is a terminal (TIOCGWINSZ),
// else `fallback`.
size_t terminal_width(int fd, size_t fallback);

// Columns `s` takes: UTF-8 characters, each counted as one (continuation bytes are not).
size_t display_width(std::string_view s);

// `s` cut to at most `width` columns, ending in "..." when it was cut (never inside a UTF-8
// character).
std::string cut_to_width(std::string_view s, size_t width);

// `text` wrapped at blanks into lines of at most `width` columns: the first line starts at
// column `first_column` (text already on it), the others after `indent` spaces. A word longer
// than a line is broken; a `backquoted span` (a command to copy) stays on one line when it
// fits one. Newlines in `text` start new lines. No newline at the end.
std::string wrap_text(std::string_view text, size_t width, size_t first_column, size_t indent);

}  // namespace npud
