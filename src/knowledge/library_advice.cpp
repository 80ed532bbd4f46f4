#include "knowledge/library_advice.hpp"

#include <charconv>

#include <fmt/format.h>

#include "knowledge/knowledge.hpp"
#include "knowledge/tsv.hpp"
#include "util/text.hpp"

namespace npud {

namespace {

std::vector<long> version_parts(std::string_view v) {
  std::vector<long> out;
  while (!v.empty()) {
    long n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc{}) break;
    out.push_back(n);
    v.remove_prefix(size_t(p - v.data()));
    if (v.empty() || v.front() != '.') break;
    v.remove_prefix(1);
  }
  return out;
}

int compare_versions(std::string_view a, std::string_view b) {
  auto x = version_parts(a), y = version_parts(b);
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    long p = i < x.size() ? x[i] : 0, q = i < y.size() ? y[i] : 0;
    if (p != q) return p < q ? -1 : 1;
  }
  return 0;
}

bool rule_listed(std::string_view rules, std::string_view rule) {
  if (rules == "*") return true;
  while (!rules.empty()) {
    size_t comma = rules.find(',');
    if (trim(rules.substr(0, comma)) == rule) return true;
    rules = comma == std::string_view::npos ? std::string_view{} : rules.substr(comma + 1);
  }
  return false;
}

}  // namespace

bool version_in_range(std::string_view version, std::string_view range) {
  range = trim(range);
  if (range.empty() || range == "*" || version.empty()) return true;
  while (!range.empty()) {
    size_t comma = range.find(',');
    std::string_view c = trim(range.substr(0, comma));
    range = comma == std::string_view::npos ? std::string_view{} : range.substr(comma + 1);
    bool ok = true;
    if (c.starts_with(">=")) ok = compare_versions(version, c.substr(2)) >= 0;
    else if (c.starts_with("<=")) ok = compare_versions(version, c.substr(2)) <= 0;
    else if (c.starts_with(">")) ok = compare_versions(version, c.substr(1)) > 0;
    else if (c.starts_with("<")) ok = compare_versions(version, c.substr(1)) < 0;
    else if (c.starts_with("==")) ok = compare_versions(version, c.substr(2)) == 0;
    if (!ok) return false;
  }
  return true;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative wildcard match: the last '*' absorbs characters on a mismatch.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

void LibraryAdviceTable::parse(std::string_view file_name, std::string_view text) {
  std::string package(file_name.substr(0, file_name.rfind('.')));
  for (const TsvLine& line : tsv_lines("advice file", file_name, text, 6)) {
    const std::vector<std::string_view>& f = line.fields;
    const size_t number = line.number;
    size_t colon = f[2].rfind(':');
    if (colon == std::string_view::npos || f[3].empty() || f[5].empty())
      throw KnowledgeError(fmt::format("advice file {} line {}: expected a site 'file:function', a cause and a lever",
                                       file_name, number));
    std::string lever = unescape_field(f[5]), condition;
    if (lever.starts_with("[if ")) {
      size_t close = lever.find("] ");
      if (close == std::string::npos || close == 4)
        throw KnowledgeError(fmt::format("advice file {} line {}: a lever's condition is \"[if NAME|NAME...] lever\"",
                                         file_name, number));
      condition = lever.substr(4, close - 4);
      lever.erase(0, close + 2);
    }
    rows_.push_back({package, std::string(f[0]), std::string(f[1]), std::string(f[2].substr(0, colon)),
                     std::string(f[2].substr(colon + 1)), std::string(f[3]), unescape_field(f[4]), std::move(lever),
                     std::move(condition), number});
  }
}

namespace {
// "ViTSelfAttention.forward" -> "forward": rows name functions with or without their class.
std::string_view unqualified(std::string_view function) {
  size_t dot = function.rfind('.');
  return dot == std::string_view::npos ? function : function.substr(dot + 1);
}
}  // namespace

const LibraryAdvice* LibraryAdviceTable::find(std::string_view rule, std::string_view package,
                                              std::string_view version, std::string_view file,
                                              std::string_view function,
                                              const std::function<bool(const LibraryAdvice&)>& accept) const {
  for (const LibraryAdvice& a : rows_)
    if (a.package == package && rule_listed(a.rules, rule) && version_in_range(version, a.versions) &&
        glob_match(a.file_glob, file) &&
        (glob_match(a.function_glob, function) || glob_match(a.function_glob, unqualified(function))) &&
        (!accept || accept(a)))
      return &a;
  return nullptr;
}

const LibraryAdviceTable& LibraryAdviceTable::builtin() {
  static const LibraryAdviceTable table = [] {
    LibraryAdviceTable t;
    for (const EmbeddedFile& f : embedded_advice()) t.parse(f.name, f.bytes);
    return t;
  }();
  return table;
}

}  // namespace npud
