#include "util/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace npud {
namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a plain file";
}

}  // namespace

int open_regular_file(const std::string& path, std::string& error) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    error = std::string("cannot open: ") + std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = std::string("cannot stat: ") + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    error = std::string("not a regular file: it is ") + kind_of(st.st_mode);
    ::close(fd);
    return -1;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

bool read_fd_bounded(int fd, uint64_t max_bytes, std::string& out, std::string& error) {
  out.clear();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return error = std::string("read error: ") + std::strerror(errno), false;
    if (n == 0) return true;
    if (out.size() + size_t(n) > max_bytes)   // a file that grew while read, or an endless stream
      return error = "too large: over " + std::to_string(max_bytes) + " bytes", false;
    out.append(buf, size_t(n));
  }
}

bool read_regular_file(const std::string& path, uint64_t max_bytes, std::string& out, std::string& error) {
  int fd = open_regular_file(path, error);
  if (fd < 0) return false;
  struct stat st {};
  ::fstat(fd, &st);
  bool ok = uint64_t(st.st_size) <= max_bytes;
  if (!ok) error = "too large: " + std::to_string(st.st_size) + " bytes (the limit is " + std::to_string(max_bytes) + ")";
  else out.reserve(size_t(st.st_size));
  ok = ok && read_fd_bounded(fd, max_bytes, out, error);
  ::close(fd);
  return ok;
}

}  // namespace npud
