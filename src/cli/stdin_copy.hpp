// `analyze -`: the readers need a file they can seek in and map (and detect the format from
// its first bytes). A regular file on stdin (`< trace.json`) is read in place; a pipe is copied
// to a temporary file that is unlinked at once, so nothing of what was piped is left behind
// whatever ends the process (SIGKILL included): the readers open it as /proc/self/fd/N. The
// copy stops at the first bytes when they cannot start a trace (JSON or gzip), and at
// kMaxStdinBytes.
#pragma once

#include <cstdint>
#include <string>

namespace npud {

class StdinCopy {
 public:
  static constexpr uint64_t kMaxStdinBytes = uint64_t(16) << 30;
  // Copies stdin as said above. Throws std::runtime_error ("-: ...") naming what failed.
  StdinCopy();
  ~StdinCopy();
  StdinCopy(const StdinCopy&) = delete;
  StdinCopy& operator=(const StdinCopy&) = delete;
  // What the readers open: /proc/self/fd/N.
  const std::string& path() const { return path_; }

 private:
  void copy_stdin(const std::string& dir);

  int fd_ = -1;   // the copy (or -1: stdin itself, a regular file)
  std::string path_;
};

}  // namespace npud
