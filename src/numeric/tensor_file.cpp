#include "numeric/tensor_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace npud {

bool is_pt_path(std::string_view path) { return path.size() > 3 && path.substr(path.size() - 3) == ".pt"; }

TensorFile::TensorFile(const std::string& path, const std::string& member, std::shared_ptr<MappedPt>* last_pt) {
  if (is_pt_path(path)) {
    if (last_pt && *last_pt && (*last_pt)->path() == path) {
      pt_ = *last_pt;
    } else {
      pt_ = std::make_shared<MappedPt>(path);
      if (last_pt) *last_pt = pt_;
    }
    index_ = pt_->find(member);
  } else {
    npy_ = std::make_unique<MappedNpy>(path);
  }
}

std::string TensorFile::view_identity() const {
  if (npy_) return npy_->path();
  const PtTensor& t = tensor();
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}", pt_->path(), t.storage_key, t.data_offset, fmt::join(t.shape, ","),
                     fmt::join(t.stride, ","), dtype_name(t.dtype));
}

}  // namespace npud
