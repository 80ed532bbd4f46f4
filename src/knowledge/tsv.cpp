#include "knowledge/tsv.hpp"

#include <fmt/format.h>

#include "knowledge/knowledge.hpp"
#include "util/text.hpp"

namespace npud {

std::vector<TextLine> text_lines(std::string_view text) {
  std::vector<TextLine> out;
  size_t number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back({++number, line});
  }
  return out;
}

std::vector<TsvLine> tsv_lines(std::string_view kind, std::string_view file, std::string_view text,
                               size_t expected_fields) {
  std::vector<TsvLine> out;
  for (const TextLine& l : text_lines(text)) {
    if (trim(l.text).empty() || l.text.front() == '#') continue;
    TsvLine t{l.number, {}};
    for (size_t start = 0;;) {
      size_t tab = l.text.find('\t', start);
      t.fields.push_back(l.text.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    if (t.fields.size() != expected_fields)
      throw KnowledgeError(fmt::format("{} {} line {}: expected {} tab-separated fields, got {}", kind, file, l.number,
                                       expected_fields, t.fields.size()));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace npud

namespace npud {

std::string unescape_field(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (s[i] == '\\' && (next == 'n' || next == 't' || next == '\\')) {
      out += next == 'n' ? '\n' : next == 't' ? '\t' : '\\';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace npud
