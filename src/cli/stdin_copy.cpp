#include "cli/stdin_copy.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace npud {

StdinCopy::StdinCopy() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/npu-doctor-stdin-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());   // mode 0600: only we can read what was piped in
  if (fd < 0) throw std::runtime_error(std::string("cannot make a temporary file for stdin: ") + std::strerror(errno));
  path_ = name.data();
  char buf[1 << 16];
  while (true) {
    ssize_t got = ::read(STDIN_FILENO, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int err = errno;
      ::close(fd);
      throw std::runtime_error(std::string("-: cannot read stdin: ") + std::strerror(err));
    }
    if (got == 0) break;
    for (ssize_t done = 0; done < got;) {
      ssize_t put = ::write(fd, buf + done, size_t(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) {
        int err = errno;
        ::close(fd);
        throw std::runtime_error(path_ + ": cannot copy stdin: " + std::strerror(err));
      }
      done += put;
    }
  }
  ::close(fd);
}

StdinCopy::~StdinCopy() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

}  // namespace npud
