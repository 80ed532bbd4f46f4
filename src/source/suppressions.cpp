#include "source/suppressions.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "util/text.hpp"

namespace npud {
namespace {

// "SYNC001, CUDA002" or "SYNC001 CUDA002" (ruff's noqa takes both) -> ids.
std::vector<std::string> id_list(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) cur += c;
    else if (!cur.empty()) out.push_back(to_upper(cur)), cur.clear();
  }
  if (!cur.empty()) out.push_back(to_upper(cur));
  return out;
}

// A rule code as ruff reads one in `# noqa:`: letters, then digits ("E501", "SYNC001").
bool is_code(std::string_view w) {
  size_t letters = 0;
  while (letters < w.size() && std::isalpha(static_cast<unsigned char>(w[letters]))) ++letters;
  if (letters == 0 || letters == w.size()) return false;
  return std::all_of(w.begin() + letters, w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// `# noqa: E501, SYNC001 -- why`: the codes up to the first word that is not one (ruff stops
// there too), so an explanation naming a rule does not silence it.
std::vector<std::string> leading_codes(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ',' || s[i] == ' ' || s[i] == '\t')) ++i;
    size_t end = i;
    while (end < s.size() && s[end] != ',' && s[end] != ' ' && s[end] != '\t') ++end;
    if (end == i || !is_code(s.substr(i, end - i))) break;
    out.push_back(to_upper(s.substr(i, end - i)));
    i = end;
  }
  return out;
}

// One comment's text (after its '#'): a directive or nothing.
bool parse_comment(std::string_view c, SuppressionComment& out) {
  c = trim(c);
  if (c.starts_with("npu-doctor:")) {
    std::string_view rest = trim(c.substr(11));
    out.file_level = rest.starts_with("ignore-file");
    if (!out.file_level && !rest.starts_with("ignore")) return false;
    rest.remove_prefix(out.file_level ? 11 : 6);
    // `ignore [ID]` (blanks before the bracket) names ids as `ignore[ID]` does: never a blanket.
    std::string_view bracket = trim(rest);
    if (bracket.starts_with('[')) rest = bracket;
    if (rest.starts_with('[')) {
      size_t close = rest.find(']');
      if (close == std::string_view::npos) return false;
      out.ids = id_list(rest.substr(1, close - 1));
      return !out.ids.empty();   // `ignore[]` is a typo, not "everything"
    }
    return rest.empty() || rest.front() == ' ' || rest.front() == '\t';
  }
  // ruff: `# noqa: E501` (the colon may have blanks around it); a bare `# noqa` is not ours.
  if (c.size() >= 4 && to_upper(c.substr(0, 4)) == "NOQA") {
    std::string_view rest = trim(c.substr(4));
    if (!rest.starts_with(':')) return false;
    out.file_level = false;
    out.ids = leading_codes(rest.substr(1));
    return !out.ids.empty();
  }
  return false;
}

}  // namespace

std::vector<SuppressionComment> parse_suppressions(std::string_view line) {
  std::vector<SuppressionComment> out;
  for (size_t p = line.find('#'); p != std::string_view::npos; p = line.find('#', p + 1)) {
    std::string_view comment = line.substr(p + 1);
    comment = comment.substr(0, comment.find('#'));   // `# noqa: E501  # npu-doctor: ignore`
    SuppressionComment c;
    if (parse_comment(comment, c)) out.push_back(std::move(c));
  }
  return out;
}

bool suppresses(const SuppressionComment& c, std::string_view rule) {
  if (c.ids.empty()) return true;
  std::string id = to_upper(rule);
  return std::find(c.ids.begin(), c.ids.end(), id) != c.ids.end();
}

bool FileSuppressions::suppressed(std::string_view rule, int line) const {
  for (const auto& c : whole_file)
    if (suppresses(c, rule)) return true;
  auto it = by_line.find(line);
  if (it == by_line.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [&](const SuppressionComment& c) { return suppresses(c, rule); });
}

FileSuppressions file_suppressions(const std::vector<std::string>& lines) {
  FileSuppressions out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find('#') == std::string::npos) continue;
    for (auto& c : parse_suppressions(lines[i])) {
      if (c.file_level) out.whole_file.push_back(std::move(c));
      else out.by_line[int(i) + 1].push_back(std::move(c));
    }
  }
  return out;
}

bool PathIgnores::ignores(std::string_view file, std::string_view rule) const {
  if (rules.empty() || file.empty()) return false;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path abs = fs::absolute(fs::path(std::string(file)), ec).lexically_normal();
  std::string rel = abs.lexically_relative(fs::path(base)).string();
  std::string name = abs.filename().string();
  std::string id = to_upper(rule);
  for (const PathIgnore& r : rules) {
    bool hit = r.glob.find('/') == std::string::npos
                   ? fnmatch(r.glob.c_str(), name.c_str(), 0) == 0 || fnmatch(r.glob.c_str(), rel.c_str(), 0) == 0
                   : rel != ".." && !rel.starts_with("../") && fnmatch(r.glob.c_str(), rel.c_str(), 0) == 0;
    if (!hit) continue;
    for (const std::string& p : r.ids)
      if (id.starts_with(p)) return true;
  }
  return false;
}

size_t suppress_findings(std::vector<Finding>& findings, const SnippetPolicy& policy, const PathIgnores& paths) {
  std::map<std::string, FileSuppressions> files;   // read once per file
  size_t before = findings.size();
  std::erase_if(findings, [&](const Finding& f) {
    if (f.first) return false;   // CAPTURE001: the input is incomplete, always said
    const std::string& file = f.location.file;
    if (file.empty()) return false;
    if (paths.ignores(file, f.rule)) return true;
    if (f.location.line <= 0) return false;
    auto it = files.find(file);
    if (it == files.end()) it = files.emplace(file, file_suppressions(read_source_lines(file, &policy))).first;
    return it->second.suppressed(f.rule, f.location.line);
  });
  return before - findings.size();
}

}  // namespace npud
