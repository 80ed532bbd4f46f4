#include "source/fixes.hpp"

#include <algorithm>
#include <filesystem>

namespace npud {

std::vector<TextEdit> collect_edits(const std::vector<Finding>& findings) {
  std::vector<TextEdit> out;
  for (const auto& f : findings) out.insert(out.end(), f.edits.begin(), f.edits.end());
  return out;
}

std::string apply_edits(std::string_view text, std::vector<TextEdit> edits, std::vector<TextEdit>* applied) {
  std::stable_sort(edits.begin(), edits.end(), [](const TextEdit& a, const TextEdit& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  std::string out;
  out.reserve(text.size() + 64);
  size_t pos = 0;
  const TextEdit* prev = nullptr;
  for (auto& e : edits) {
    if (e.start > e.end || e.end > text.size()) continue;
    if (prev) {
      if (e.start < prev->end) continue;  // overlaps the edit before: left for the next run
      if (e.start == e.end && prev->start == e.start && prev->end == e.end && prev->replacement == e.replacement)
        continue;  // the same insertion twice
    }
    out.append(text.substr(pos, e.start - pos));
    out += e.replacement;
    pos = e.end;
    prev = &e;
    if (applied) applied->push_back(e);
  }
  out.append(text.substr(pos));
  return out;
}

namespace {

std::vector<std::string_view> split_lines(std::string_view t) {
  std::vector<std::string_view> out;
  size_t p = 0;
  while (p < t.size()) {
    size_t nl = t.find('\n', p);
    size_t e = nl == std::string_view::npos ? t.size() : nl + 1;
    out.push_back(t.substr(p, e - p));
    p = e;
  }
  return out;
}

// One changed stretch: old lines [first, first + old_lines.size()) become new_lines.
struct Change {
  size_t first;
  std::vector<std::string_view> old_lines, new_lines;
};

void emit(std::string& out, char tag, std::string_view line) {
  out += tag;
  out += line;
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

}  // namespace

std::string diff_header_path(const std::string& path, const std::string& cwd) {
  namespace fs = std::filesystem;
  fs::path abs = fs::path(path).is_absolute() ? fs::path(path) : fs::path(cwd) / path;
  abs = abs.lexically_normal();
  fs::path rel = abs.lexically_relative(fs::path(cwd).lexically_normal());
  if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  std::string out = abs.generic_string();
  return out.substr(out.find_first_not_of('/'));
}

namespace {

// Lines up the two texts greedily: fixes change a few lines locally, so after a difference
// the nearest pair of equal lines (smallest skip in both) is where they agree again. Any
// alignment gives a correct diff; this one gives the small diff for local edits.
std::vector<Change> align_lines(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  const size_t kWindow = 200;  // how far ahead to look for the lines to line up again
  size_t n = a.size(), m = b.size();
  std::vector<Change> changes;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ++i, ++j;
      continue;
    }
    size_t da = n - i, db = m - j;  // default: the rest differs
    bool found = false;
    for (size_t s = 1; s <= kWindow && !found; ++s) {
      for (size_t x = 0; x <= s; ++x) {
        size_t y = s - x;
        if (i + x > n || j + y > m) continue;
        bool both_end = i + x == n && j + y == m;
        if (both_end || (i + x < n && j + y < m && a[i + x] == b[j + y])) {
          da = x, db = y, found = true;
          break;
        }
      }
    }
    Change c;
    c.first = i;
    c.old_lines.assign(a.begin() + long(i), a.begin() + long(i + da));
    c.new_lines.assign(b.begin() + long(j), b.begin() + long(j + db));
    changes.push_back(std::move(c));
    i += da, j += db;
  }
  return changes;
}

}  // namespace

std::vector<LineOrigin> line_origins(std::string_view old_text, std::string_view new_text) {
  auto a = split_lines(old_text);
  auto b = split_lines(new_text);
  std::vector<LineOrigin> out;
  out.reserve(b.size());
  size_t i = 0;   // old line of the next new line
  for (const Change& c : align_lines(a, b)) {
    for (; i < c.first; ++i) out.push_back({i, true});
    for (size_t k = 0; k < c.new_lines.size(); ++k)
      out.push_back({c.first + std::min(k, c.old_lines.empty() ? 0 : c.old_lines.size() - 1), false});
    i = c.first + c.old_lines.size();
  }
  for (; out.size() < b.size(); ++i) out.push_back({i, true});
  return out;
}

std::string unified_diff(std::string_view path, std::string_view old_text, std::string_view new_text) {
  if (old_text == new_text) return {};
  const size_t kContext = 3;
  auto a = split_lines(old_text);
  auto b = split_lines(new_text);
  size_t n = a.size();
  std::vector<Change> changes = align_lines(a, b);
  if (changes.empty()) return {};

  std::string out = "--- a/" + std::string(path) + "\n+++ b/" + std::string(path) + "\n";
  long delta = 0;  // new line number minus old line number before the current hunk
  size_t k0 = 0;
  while (k0 < changes.size()) {
    // Group changes whose context would touch.
    size_t k1 = k0;
    while (k1 + 1 < changes.size() &&
           changes[k1 + 1].first <= changes[k1].first + changes[k1].old_lines.size() + 2 * kContext)
      ++k1;
    size_t hunk_first = changes[k0].first >= kContext ? changes[k0].first - kContext : 0;
    size_t hunk_end = std::min(n, changes[k1].first + changes[k1].old_lines.size() + kContext);
    std::string body;
    size_t old_count = 0, new_count = 0;
    size_t line = hunk_first;
    long hunk_delta = 0;
    for (size_t k = k0; k <= k1; ++k) {
      for (; line < changes[k].first; ++line, ++old_count, ++new_count) emit(body, ' ', a[line]);
      for (auto l : changes[k].old_lines) emit(body, '-', l), ++old_count;
      for (auto l : changes[k].new_lines) emit(body, '+', l), ++new_count;
      line += changes[k].old_lines.size();
      hunk_delta += long(changes[k].new_lines.size()) - long(changes[k].old_lines.size());
    }
    for (; line < hunk_end; ++line, ++old_count, ++new_count) emit(body, ' ', a[line]);
    // An empty range is written "L,0" with L the line before it.
    size_t old_start = old_count ? hunk_first + 1 : hunk_first;
    size_t new_base = size_t(long(hunk_first) + delta);
    size_t new_start = new_count ? new_base + 1 : new_base;
    out += "@@ -" + std::to_string(old_start) + "," + std::to_string(old_count) + " +" + std::to_string(new_start) +
           "," + std::to_string(new_count) + " @@\n";
    out += body;
    delta += hunk_delta;
    k0 = k1 + 1;
  }
  return out;
}

}  // namespace npud
