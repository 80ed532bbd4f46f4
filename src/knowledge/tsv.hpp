// Line-oriented reading of the embedded data files (data/knowledge/*.tsv, data/advice/*.tsv;
// docs/knowledge.md): each line with its 1-based number, a trailing '\r' dropped; data lines
// split on tabs. One reader for every table, so they agree on comments and line numbers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace npud {

struct TextLine {
  size_t number;
  std::string_view text;
};
// Every line of `text`, blank lines and comments included.
std::vector<TextLine> text_lines(std::string_view text);

struct TsvLine {
  size_t number;
  std::vector<std::string_view> fields;
};
// The data lines (blank lines and '#' comments skipped), split on tabs. A line with another
// field count throws KnowledgeError: "<kind> <file> line N: expected K tab-separated fields, got M".
std::vector<TsvLine> tsv_lines(std::string_view kind, std::string_view file, std::string_view text,
                               size_t expected_fields);

// A text field's escapes resolved: "\n" -> a line break, "\t" -> a tab, "\\" -> "\".
std::string unescape_field(std::string_view s);

}  // namespace npud
