#include "util/input_error.hpp"

#include <fmt/format.h>

namespace npud {

std::string InputError::describe() const {
  if (has_offset_) return fmt::format("{}: byte {}: {}", file_, offset_, what());
  return fmt::format("{}: {}", file_, what());
}

}  // namespace npud
