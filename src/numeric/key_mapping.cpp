#include "numeric/key_mapping.hpp"

#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "util/input_error.hpp"
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

KeyMapping read_key_mapping(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "cannot open the mapping file", false);
  KeyMapping m;
  m.path = path;
  std::string line;
  uint64_t offset = 0;
  while (std::getline(in, line)) {
    uint64_t at = offset;
    offset += line.size() + 1;
    std::string_view s = trim(line);
    if (s.empty() || s.front() == '#' || s == "---") continue;
    // Keys hold dots, never ": " (msprobe's names are Python identifiers and indices).
    size_t colon = s.find(": ");
    if (colon == std::string_view::npos && !s.empty() && s.back() == ':') colon = s.size() - 1;
    std::string_view from = colon == std::string_view::npos ? "" : unquote(trim(s.substr(0, colon)));
    std::string_view to = colon == std::string_view::npos ? "" : unquote(trim(s.substr(colon + 1)));
    if (from.empty() || to.empty())
      throw InputError(path, at, fmt::format("expected `name: reference name`, got \"{}\"", std::string(s.substr(0, 80))));
    m.pairs.emplace_back(std::string(from), std::string(to));
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
  for (const auto& [from, to] : mapping.pairs)
    if (from == key || from == out) return to;
  // Cell/module names: only inside module entries, as msprobe's cell_mapping.
  if (std::string_view(out).substr(0, 7) != "Module.") return out;
  for (const auto& [from, to] : mapping.pairs) {
    size_t at = out.find(from, 7);
    if (at != std::string::npos) return out.replace(at, from.size(), to);
  }
  return out;
}

}  // namespace npud
