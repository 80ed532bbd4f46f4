#include "analysis/source_sites.hpp"

#include <fmt/format.h>

namespace npud {

std::string PackageSite::describe() const {
  std::string out = package;
  if (!version.empty()) out += " " + version;
  out += fmt::format(", {}:{}", file, line);
  if (!function.empty() && function != "<module>") out += fmt::format(" ({})", function);
  return out;
}

SourceSites::SourceSites(const Trace& t) : t_(t) {}

const SourceSites::Where& SourceSites::classify(StrId file) const {
  auto it = cache_.find(file);
  if (it != cache_.end()) return it->second;
  auto [package, inside] = package_of_path(t_.str(file));
  return cache_.emplace(file, Where{std::string(package), std::string(inside)}).first->second;
}

bool SourceSites::is_package(StrId file) const { return !classify(file).package.empty(); }

PackageSite SourceSites::site(const Frame& f) const {
  const Where& w = classify(f.file);
  PackageSite s;
  if (w.package.empty()) return s;
  s.package = w.package;
  s.file = w.file;
  s.line = f.line;
  s.function = std::string(t_.str(f.function));
  s.version = std::string(t_.env_value("package:" + w.package));
  return s;
}

}  // namespace npud
