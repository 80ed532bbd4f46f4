// NumPy .npy files (format versions 1.0, 2.0, 3.0), read without a Python interpreter and
// without ever unpickling: the header is parsed strictly and object arrays are refused.
// The data is memory-mapped read-only; nothing is copied.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "numeric/tensor_view.hpp"
#include "util/mapped_file.hpp"

namespace npud {

// Headers longer than this are refused (numpy itself writes < 200 bytes for any real array).
inline constexpr uint64_t kMaxNpyHeader = 65536;

struct NpyHeader {
  DType dtype = DType::F32;
  bool byte_swapped = false;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  uint64_t count = 0;        // product of shape
  uint64_t data_offset = 0;  // bytes before the first element
  std::string descr;         // as written, e.g. "<f4"
};

// Parses and checks a whole .npy file held in `bytes` (the data must follow the header and
// be exactly count * itemsize long). Throws InputError naming `name` and the byte offset.
NpyHeader parse_npy(std::string_view bytes, const std::string& name);

// Reads only enough of the file at `path` to parse its header, and checks the file size
// against it (shape and dtype without mapping the data).
NpyHeader read_npy_header(const std::string& path);

// A .npy file mapped read-only for the lifetime of this object.
class MappedNpy {
 public:
  explicit MappedNpy(const std::string& path);  // throws InputError

  const NpyHeader& header() const { return header_; }
  TensorView view() const;
  const std::string& path() const { return file_.path(); }

 private:
  MappedFile file_;
  NpyHeader header_;
};

}  // namespace npud
