// The data/knowledge/* texts compiled into the binary (cmake/EmbedKnowledge.cmake).
#pragma once

#include <span>

#include "util/embedded.hpp"

namespace npud {

std::span<const EmbeddedFile> embedded_knowledge();

}  // namespace npud
