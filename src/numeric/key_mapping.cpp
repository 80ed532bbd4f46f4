#include "numeric/key_mapping.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "util/input_error.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace npud {
namespace {

std::string_view unquote(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) return s.substr(1, s.size() - 2);
  return s;
}

// msprobe's fixed MindSpore -> PyTorch prefixes (acc_compare.py process_internal_api_mapping,
// process_cell_mapping): longest first, so "MintFunctional." is not read as "Mint.".
constexpr std::pair<std::string_view, std::string_view> kBuiltin[] = {
    {"MintFunctional.", "Functional."}, {"Mint.", "Torch."}, {"Cell.", "Module."}};

}  // namespace

void KeyMapping::add(std::string from, std::string to) {
  first.try_emplace(from, pairs.size());
  pairs.emplace_back(std::move(from), std::move(to));
}

KeyMapping read_key_mapping(const std::string& path) {
  std::string text, error;
  if (!read_regular_file(path, kMaxMappingBytes, text, error)) throw InputError(path, 0, error, false);
  KeyMapping m;
  m.path = path;
  uint64_t offset = 0;
  while (offset < text.size()) {
    uint64_t at = offset;
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    offset = end + 1;
    std::string_view s = trim(std::string_view(text).substr(at, end - at));
    if (s.empty() || s.front() == '#' || s == "---") continue;
    if (s.front() == '{' || s.front() == '[')   // `{a: b, c: d}` would read as one pair `{a` -> `b, c: d}`
      throw InputError(path, at, "flow-style YAML ({...} or [...]) is not read: write one `name: reference name` per line");
    // Keys hold dots, never ": " (msprobe's names are Python identifiers and indices).
    size_t colon = s.find(": ");
    if (colon == std::string_view::npos && !s.empty() && s.back() == ':') colon = s.size() - 1;
    std::string_view from = colon == std::string_view::npos ? "" : unquote(trim(s.substr(0, colon)));
    std::string_view to = colon == std::string_view::npos ? "" : unquote(trim(s.substr(colon + 1)));
    if (from.empty() || to.empty())
      throw InputError(path, at, fmt::format("expected `name: reference name`, got \"{}\"", s.substr(0, 80)));
    m.add(std::string(from), std::string(to));
  }
  return m;
}

std::string map_key(const KeyMapping& mapping, const std::string& key, bool builtin) {
  std::string out = key;
  if (builtin)
    for (auto [from, to] : kBuiltin)
      if (std::string_view(out).substr(0, from.size()) == from) {
        out = std::string(to) + out.substr(from.size());
        break;
      }
  if (mapping.first.empty()) return out;
  auto index_of = [&](std::string_view name) {
    auto it = mapping.first.find(std::string(name));
    return it == mapping.first.end() ? SIZE_MAX : it->second;
  };
  // A whole key: the key as dumped or as renamed above, whichever line comes first.
  if (size_t i = std::min(index_of(key), index_of(out)); i != SIZE_MAX) return mapping.pairs[i].second;
  // Cell/module paths: only inside module entries, as msprobe's cell_mapping. Every run of whole
  // parts after "Module." is a candidate; the line first in the file wins, at its first place.
  if (std::string_view(out).substr(0, 7) != "Module.") return out;
  std::vector<size_t> starts{7}, ends;
  for (size_t dot = out.find('.', 7); dot != std::string::npos; dot = out.find('.', dot + 1)) {
    ends.push_back(dot);
    starts.push_back(dot + 1);
  }
  ends.push_back(out.size());
  size_t best = SIZE_MAX, best_at = 0;
  for (size_t b : starts)
    for (size_t e : ends)
      if (e > b)
        if (size_t i = index_of(std::string_view(out).substr(b, e - b)); i < best || (i == best && b < best_at))
          best = i, best_at = b;
  if (best == SIZE_MAX) return out;
  return out.replace(best_at, mapping.pairs[best].first.size(), mapping.pairs[best].second);
}

}  // namespace npud
