// PyTorch .pt files (torch.save's zip format, torch >= 1.6), read without Python and without
// running pickle code: the stored zip archive (numeric/stored_zip.hpp) gives data.pkl and the
// data/<key> storages, the restricted pickle VM (numeric/torch_pickle.hpp) gives the tensors,
// and each tensor's bytes are a slice of the mapped file. The legacy format (torch < 1.6 or
// _use_new_zipfile_serialization=False: a stream of pickles) is refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "numeric/tensor_view.hpp"
#include "numeric/torch_pickle.hpp"
#include "util/mapped_file.hpp"

namespace npud {

struct PtTensor : PickledTensor {
  uint64_t data_offset = 0;  // file byte of the tensor's first element (storage start + offset)
};

struct PtContents {
  std::vector<PtTensor> tensors;
  bool byte_swapped = false;   // the archive's byteorder is not this machine's
  uint64_t other_values = 0;
};

// Parses the whole file held in `bytes`. Throws InputError naming `name` and the byte offset.
PtContents parse_pt(std::string_view bytes, const std::string& name);

// The contents of the file at `path` (mapped to be parsed; the tensor data is not read).
PtContents read_pt_index(const std::string& path);

// Tensor i of `c` (parsed from `file`) with its elements in C order: a slice of the file when
// its view is contiguous, else gathered through its strides into `copy`, refused (InputError)
// when larger than 1 GiB + 4x the file (a stride-0 view of a tiny storage can claim any size).
TensorView pt_view(std::string_view file, const PtContents& c, size_t i, std::vector<char>& copy,
                   const std::string& name);

// A .pt file mapped read-only for the lifetime of this object, parsed once (a state_dict's
// tensors are all read from one parse).
class MappedPt {
 public:
  explicit MappedPt(const std::string& path);  // throws InputError
  const PtContents& contents() const { return contents_; }
  const std::string& path() const { return file_.path(); }
  // Index of the tensor named `member` ("" = the file's only tensor); throws InputError.
  size_t find(const std::string& member) const;
  // pt_view of tensor i (a gathered copy goes to `copy`).
  TensorView view(size_t i, std::vector<char>& copy) const;

 private:
  MappedFile file_;
  PtContents contents_;
  std::unordered_map<std::string, size_t> by_name_;
};

}  // namespace npud
