#include "cli/stdin_copy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ingest/byte_source.hpp"
#include "util/escape.hpp"
#include "util/text.hpp"

namespace npud {
namespace {

std::runtime_error stdin_error(const std::string& what) { return std::runtime_error("-: " + what); }

// Whether the first bytes piped in can begin a trace or capture: JSON (after a BOM and
// whitespace) or gzip. Throws naming the first byte otherwise, before gigabytes are copied.
void check_first_bytes(std::string_view head, bool at_end) {
  if (has_gzip_magic(head)) return;
  size_t i = head.find_first_not_of(" \t\n\r", utf8_bom_size(head));
  if (i == std::string_view::npos) {
    if (at_end) throw stdin_error("stdin is empty (pipe a trace or capture, or name its file)");
    return;   // only whitespace yet: the reader decides
  }
  if (head[i] != '{' && head[i] != '[')
    throw stdin_error(fmt::format("byte {}: not JSON or gzip: the input starts with '{}'", i,
                                  terminal_safe(head.substr(i, 1))));
}

}  // namespace

StdinCopy::StdinCopy() {
  struct stat st;
  if (::fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {   // `< file`: nothing to copy
    path_ = "/proc/self/fd/" + std::to_string(STDIN_FILENO);
    return;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp && *tmp ? tmp : "/tmp";
  std::string pattern = dir + "/npu-doctor-stdin-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd_ = ::mkostemp(name.data(), O_CLOEXEC);   // mode 0600: only we can read what was piped in
  if (fd_ < 0) throw stdin_error(fmt::format("cannot make a temporary file in {}: {}", dir, std::strerror(errno)));
  ::unlink(name.data());
  path_ = "/proc/self/fd/" + std::to_string(fd_);
  try {
    copy_stdin(dir);
  } catch (...) {
    ::close(fd_);   // no destructor runs for a constructor that throws
    throw;
  }
}

void StdinCopy::copy_stdin(const std::string& dir) {
  std::vector<char> buf(1 << 16);
  std::string head;   // the first bytes, until they tell what the input is
  uint64_t copied = 0;
  while (true) {
    ssize_t got = ::read(STDIN_FILENO, buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw stdin_error(std::string("cannot read stdin: ") + std::strerror(errno));
    if (head.size() < 64) {
      head.append(buf.data(), size_t(got));
      check_first_bytes(head, got == 0);
    }
    if (got == 0) break;
    copied += uint64_t(got);
    if (copied > kMaxStdinBytes)
      throw stdin_error(fmt::format("more than {} GiB on stdin; name the file instead (`analyze FILE` reads it "
                                    "without a copy)", kMaxStdinBytes >> 30));
    for (ssize_t done = 0; done < got;) {
      ssize_t put = ::write(fd_, buf.data() + done, size_t(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) throw stdin_error(fmt::format("cannot copy stdin into {}: {}", dir, std::strerror(errno)));
      done += put;
    }
  }
}

StdinCopy::~StdinCopy() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace npud
