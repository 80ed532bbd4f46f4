#include "rules/finding.hpp"

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
  return fmt::format("{}\x1f{}\x1f{}\x1f{}", f.rule, f.location.file, f.location.line, f.location.op);
}

}  // namespace npud
