// A read-only view of a tensor's elements in memory (a mapped npy file, a test buffer):
// element type, byte order and count. The metrics read elements through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/dtype.hpp"

namespace npud {


struct TensorView {
  DType dtype = DType::F32;
  bool byte_swapped = false;  // stored in the other byte order than this machine's
  const void* data = nullptr;
  uint64_t count = 0;         // elements
};

}  // namespace npud
