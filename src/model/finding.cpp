#include "model/finding.hpp"

#include <fmt/format.h>

namespace npud {

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "unknown";
}

std::optional<Severity> parse_severity(std::string_view s) {
  if (s == "info" || s == "note") return Severity::Info;
  if (s == "warning" || s == "warn") return Severity::Warning;
  if (s == "error") return Severity::Error;
  return std::nullopt;
}

std::string finding_identity(const Finding& f) {
  const LibrarySite& l = f.location.library;
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", f.rule, f.location.file, f.location.line, f.location.op,
                     l.package, l.file, l.cause.empty() ? std::to_string(l.line) : l.cause);
}

std::string Location::file_line() const {
  if (file.empty()) return {};
  if (line <= 0) return file;
  return enclosing ? fmt::format("{}:{} (top level at profiler start)", file, line) : fmt::format("{}:{}", file, line);
}

std::string LibrarySite::describe() const {
  std::string out = package;
  if (!version.empty()) out += " " + version;
  out += fmt::format(", {}:{}", file, line);
  if (!function.empty() && function != "<module>") out += fmt::format(" ({})", function);
  return out;
}

bool no_program_frame(const Location& loc) {
  return !loc.library.empty() && loc.file.ends_with(loc.library.file) && loc.line == loc.library.line;
}

std::string where(const Location& loc) {
  std::string at;
  if (!loc.file.empty()) at = loc.file_line();
  else if (!loc.module.empty()) at = loc.module;
  else at = loc.op;
  if (loc.library.empty()) return at;
  // Anchored at the program's own line: say which package line it led to.
  if (no_program_frame(loc)) return loc.library.describe();
  return fmt::format("{} (in {})", at, loc.library.describe());
}

bool call_site(const Location& loc) { return !loc.file.empty() && !loc.enclosing; }

std::string site_key(const Location& loc) {
  std::string key = !call_site(loc) ? "op\x1f" + loc.op : fmt::format("{}:{}", loc.file, loc.line);
  const LibrarySite& l = loc.library;
  if (!l.empty())   // one cause wherever in the package it shows; else one package line
    key += l.cause.empty() ? fmt::format("\x1f{}/{}:{}", l.package, l.file, l.line) : fmt::format("\x1f{}/{}", l.package, l.cause);
  return key;
}

}  // namespace npud
