// Cuts a large Python file into pieces of whole top-level statements, so that the scan holds
// the syntax tree of one piece at a time (a tree costs ~35 bytes per source byte: a 50 MB
// generated file would need ~2 GB at once). A light tokenizer finds the cut points: a line at
// column 0, outside brackets, strings and backslash continuations, that starts a statement of
// its own (not else/elif/except/finally, not the def under a decorator).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace npud {

struct StatementChunk {
  uint32_t start_byte = 0, end_byte = 0;
  uint32_t start_row = 0;  // 0-based line of start_byte (which is at column 0)
  // Bytes of the longest logical line in the piece (lines joined by brackets or a backslash
  // count as one): only a logical line this long can nest deep enough to break the parser.
  uint32_t longest_logical_line = 0;
};

// Pieces of at least `target` bytes (the last may be shorter) covering all of `text`; one
// piece when text is no longer than `target` or has no cut point.
std::vector<StatementChunk> statement_chunks(std::string_view text, size_t target);

}  // namespace npud
