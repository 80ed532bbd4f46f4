#include "report/relative_paths.hpp"

namespace npud {

std::string without_dir_prefix(std::string_view text, std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  if (dir.size() <= 1) return std::string(text);
  const std::string prefix = std::string(dir) + "/";
  std::string out;
  size_t from = 0;
  for (size_t at; (at = text.find(prefix, from)) != std::string_view::npos; from = at + prefix.size()) {
    // Only a whole path: "/home/u/projx/a.py" is not under "/home/u/proj" (checked by the '/'),
    // and "/x/home/u/proj/a.py" is not either.
    const bool starts_path = at == 0 || text[at - 1] == ' ' || text[at - 1] == '(' || text[at - 1] == '\'' ||
                             text[at - 1] == '"' || text[at - 1] == '`' || text[at - 1] == ',' ||
                             text[at - 1] == '\n' || text[at - 1] == '=' || text[at - 1] == ':';
    out.append(text.substr(from, at - from));
    if (!starts_path) out.append(prefix);
  }
  out.append(text.substr(from));
  return out;
}

void shorten_paths_under(Report& report, std::string_view dir) {
  auto shorten = [dir](std::string& s) { s = without_dir_prefix(s, dir); };
  shorten(report.summary.source);
  for (std::string& note : report.notes) shorten(note);
  for (Finding& f : report.findings) {
    shorten(f.location.file);
    shorten(f.message);
    shorten(f.fix);
    for (std::string& note : f.notes) shorten(note);
  }
}

}  // namespace npud
