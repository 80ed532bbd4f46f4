// A regular file mapped read-only for the lifetime of this object (tensor files: .npy, .pt).
// Nothing is copied; pages are read as they are touched.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace npud {

class MappedFile {
 public:
  // Throws InputError (file named, no offset) when the path is not a regular file or cannot
  // be mapped. An empty file gives an empty view.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {static_cast<const char*>(map_), size_}; }
  const std::string& path() const { return path_; }
  // The tensor data is read front to back once: let the kernel read ahead.
  void advise_sequential() const;

 private:
  std::string path_;
  void* map_ = nullptr;
  size_t size_ = 0;
};

}  // namespace npud
