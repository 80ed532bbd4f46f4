// Input text (op names, file paths, kernel names) is hostile: it may hold control
// characters, terminal escape sequences, bidi overrides or invalid UTF-8. These helpers
// decode UTF-8 leniently and neutralise what a terminal or a JSON reader must not see.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace npud {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes the code point at s[pos] and advances pos. Invalid or truncated sequences,
// overlong forms and surrogates decode as U+FFFD consuming one byte.
char32_t next_code_point(std::string_view s, size_t& pos);

// Appends the UTF-8 encoding of c.
void append_utf8(std::string& out, char32_t c);

// Characters a terminal must not receive raw: C0/C1 controls, DEL, and the bidi
// embedding/override/isolate marks that can make text read differently than it is.
bool is_unsafe_for_terminal(char32_t c);

// For terminal output: unsafe characters become visible escapes ("\n", "\x1b", "\u202e"),
// invalid UTF-8 becomes U+FFFD. With keep_newlines, '\n' passes (multi-line fix texts).
std::string terminal_safe(std::string_view s, bool keep_newlines = false);

}  // namespace npud
