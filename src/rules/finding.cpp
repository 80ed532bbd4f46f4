#include "rules/finding.hpp"

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

}  // namespace npud
