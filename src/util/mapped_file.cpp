#include "util/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/input_error.hpp"
#include "util/regular_file.hpp"

namespace npud {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  std::string error;
  int fd = open_regular_file(path, error);  // a FIFO or device is refused, never waited on
  if (fd < 0) throw InputError(path, 0, error, false);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw InputError(path, 0, fmt::format("cannot stat: {}", std::strerror(e)), false);
  }
  size_ = size_t(st.st_size);
  if (size_ > 0) {
    map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map_ == MAP_FAILED) {
      int e = errno;
      map_ = nullptr;
      ::close(fd);
      throw InputError(path, 0, fmt::format("cannot map: {}", std::strerror(e)), false);
    }
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (map_) ::munmap(map_, size_);
}

void MappedFile::advise_sequential() const {
  if (map_) ::madvise(map_, size_, MADV_SEQUENTIAL);
}

}  // namespace npud
