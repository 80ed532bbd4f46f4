// One tensor of a dump, from a .npy file or from a .pt file (by the file's extension),
// mapped read-only: what compare needs of either (shape, dtype, elements).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "numeric/npy.hpp"
#include "numeric/pt.hpp"
#include "numeric/tensor_view.hpp"

namespace npud {

// A torch.save file by its name: .pt (not .pth: Python's site folders hold text .pth files,
// and a tree of tensors that held one would be refused).
bool is_pt_path(std::string_view path);

class TensorFile {
 public:
  // member: the tensor's name inside a .pt file ("" = its only tensor); "" for .npy.
  // last_pt: the .pt file this side opened before, reused when `path` is the same (the
  // tensors of one state_dict come one after the other), replaced otherwise. Throws InputError.
  TensorFile(const std::string& path, const std::string& member, std::shared_ptr<MappedPt>* last_pt = nullptr);

  const std::string& path() const { return npy_ ? npy_->path() : pt_->path(); }
  const std::vector<int64_t>& shape() const { return npy_ ? npy_->header().shape : tensor().shape; }
  DType dtype() const { return npy_ ? npy_->header().dtype : tensor().dtype; }
  bool fortran_order() const { return npy_ && npy_->header().fortran_order; }
  uint64_t count() const { return npy_ ? npy_->header().count : tensor().count; }
  // A .pt tensor's dtype that compare does not measure (complex, float8); "" otherwise.
  std::string uncompared_dtype() const { return npy_ ? std::string() : tensor().uncompared_dtype; }
  uint64_t data_offset() const { return npy_ ? npy_->header().data_offset : tensor().data_offset; }
  TensorView view() { return npy_ ? npy_->view() : pt_->view(index_, copy_); }
  // Equal for two TensorFiles whose elements are the same bytes read the same way: one .npy
  // file, or one view (storage, offset, shape, strides, dtype) of one .pt file. torch.save writes
  // N views of one tensor as N names of one storage: compare reads such a view once.
  std::string view_identity() const;

 private:
  const PtTensor& tensor() const { return pt_->contents().tensors[index_]; }
  std::unique_ptr<MappedNpy> npy_;
  std::shared_ptr<MappedPt> pt_;
  size_t index_ = 0;
  std::vector<char> copy_;  // a strided view gathered into C order
};

}  // namespace npud
