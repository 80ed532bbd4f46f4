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

}  // namespace npud
