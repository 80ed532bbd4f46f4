#include "util/embedded.hpp"

namespace npud {

std::string_view find_embedded(std::span<const EmbeddedFile> files, std::string_view name) {
  for (const auto& f : files)
    if (f.name == name) return f.bytes;
  return {};
}

}  // namespace npud
