#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace npud {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  tmp_ = path_ + ".tmp." + std::to_string(::getpid());
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) throw std::runtime_error("cannot write " + tmp_ + ": " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::remove(tmp_.c_str());
  }
}

void AtomicFile::commit() {
  out_.flush();
  if (!out_) throw std::runtime_error("cannot write " + tmp_ + ": " + std::strerror(errno));
  out_.close();
  int fd = ::open(tmp_.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  // The new file takes the old one's permissions (--fix on an executable script keeps it
  // executable), before it becomes visible under the name.
  struct stat st;
  if (::stat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::chmod(tmp_.c_str(), st.st_mode & 07777);
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp_ + " to " + path_ + ": " + std::strerror(errno));
  committed_ = true;
}

}  // namespace npud
