#include "source/api_map.hpp"

#include <stdexcept>

namespace npud {

ApiMap ApiMap::parse(std::string_view text) {
  ApiMap m;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string_view> cols;
    size_t c = 0;
    while (true) {
      size_t tab = line.find('\t', c);
      cols.push_back(line.substr(c, tab == std::string_view::npos ? std::string_view::npos : tab - c));
      if (tab == std::string_view::npos) break;
      c = tab + 1;
    }
    if (cols.size() != 3 || cols[0].empty() || cols[1].empty())
      throw std::runtime_error("api-aten-map.tsv line " + std::to_string(line_no) +
                               ": expected 3 tab-separated columns");
    ApiEntry e;
    e.api = std::string(cols[0]);
    size_t s = 0;
    while (s <= cols[1].size()) {
      size_t comma = cols[1].find(',', s);
      if (comma == std::string_view::npos) comma = cols[1].size();
      if (comma > s) e.ops.emplace_back(cols[1].substr(s, comma - s));
      s = comma + 1;
    }
    if (cols[2] != "-") e.host_note = std::string(cols[2]);
    m.index_.emplace(e.api, m.entries_.size());
    m.entries_.push_back(std::move(e));
  }
  return m;
}

const ApiMap& ApiMap::builtin() {
  static const ApiMap m = [] {
    std::string_view text = find_embedded(embedded_api_aten_map(), "api-aten-map.tsv");
    return parse(text);
  }();
  return m;
}

const ApiEntry* ApiMap::find(std::string_view api) const {
  auto it = index_.find(std::string(api));
  return it == index_.end() ? nullptr : &entries_[it->second];
}

}  // namespace npud
