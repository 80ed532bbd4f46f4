// A read-only view of a tensor's elements in memory (a mapped npy file, a test buffer):
// element type, byte order and count. The metrics read elements through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npud {

enum class DType : uint8_t { F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool };

std::string_view dtype_name(DType d);  // "float16", "bfloat16", "float32", ..., "bool"
size_t dtype_size(DType d);

struct TensorView {
  DType dtype = DType::F32;
  bool byte_swapped = false;  // stored in the other byte order than this machine's
  const void* data = nullptr;
  uint64_t count = 0;         // elements
};

}  // namespace npud
