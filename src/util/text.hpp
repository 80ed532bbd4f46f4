// Small text helpers shared by the readers of line-based files (knowledge tables, profiler
// CSVs, install-tree version files).
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npud {

// Bytes of the UTF-8 byte order mark at the start of `s` (3), or 0. Editors on Windows
// write one; JSON readers skip it and add this to the byte offsets they report.
inline size_t utf8_bom_size(std::string_view s) { return s.starts_with("\xEF\xBB\xBF") ? 3 : 0; }

// At most `max` bytes (plus the ellipsis that marks a cut), never inside a UTF-8 character.
inline std::string shorten(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "\xE2\x80\xA6";
}

// `s` with every run of non-blank bytes longer than `max` shortened, its length said: a 1 MiB
// op name in a finding's message, fix and notes would make every report format (and the page)
// as big as the names times the findings. Real kernel names (templated C++) reach a few hundred
// bytes; past 4 KiB nobody reads one.
inline std::string bound_long_words(std::string_view s, size_t max = 4096) {
  auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\t'; };
  std::string out;
  size_t from = 0;
  for (size_t i = 0; i < s.size();) {
    if (blank(s[i])) { ++i; continue; }
    size_t end = i;
    while (end < s.size() && !blank(s[end])) ++end;
    if (end - i > max) {
      out.append(s.substr(from, i - from));
      out += shorten(s.substr(i, end - i), max) + "(" + std::to_string(end - i) + " bytes)";
      from = end;
    }
    i = end;
  }
  if (from == 0) return std::string(s);
  out.append(s.substr(from));
  return out;
}

// `s` without leading and trailing blanks (space, tab, CR, LF, VT, FF).
inline std::string_view trim(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// A whole (trimmed) decimal integer, or nothing.
inline std::optional<int64_t> parse_int(std::string_view v) {
  v = trim(v);
  int64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc{} || p != v.data() + v.size()) return std::nullopt;
  return out;
}

// Whether `hay` contains `needle` ignoring ASCII case; `needle` must be lower case. No copy:
// callers test every event name of a trace.
inline bool icontains(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return false;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    size_t j = 0;
    while (j < needle.size() && lower(hay[i + j]) == needle[j]) ++j;
    if (j == needle.size()) return true;
  }
  return false;
}

// ASCII lower case (names, task types; not locale text).
inline std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

// ASCII upper case (rule ids and selectors; not locale text).
inline std::string to_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
  return out;
}

// Levenshtein distance (insertions, deletions, substitutions) of two short words: "did you mean".
inline size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The comma-separated items of `list`, trimmed, empty ones dropped ("SYNC, idle,," -> SYNC, idle).
inline std::vector<std::string_view> comma_items(std::string_view list) {
  std::vector<std::string_view> out;
  for (size_t s = 0; s <= list.size();) {
    size_t c = list.find(',', s);
    if (c == std::string_view::npos) c = list.size();
    if (std::string_view item = trim(list.substr(s, c - s)); !item.empty()) out.push_back(item);
    s = c + 1;
  }
  return out;
}

}  // namespace npud
