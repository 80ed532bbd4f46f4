// Inputs are read from regular files only. A FIFO given as an input blocks open() until some
// writer appears (forever, if none does), and a device such as /dev/zero never ends: both are
// refused at once, before anything is read (exit 2 with the file named).
#pragma once

#include <cstdint>
#include <string>

namespace npud {

// Opens path read-only when it is (or a symlink leads to) a regular file: returns the fd, or
// -1 with `error` set ("cannot open: No such file or directory", "not a regular file: it is
// a FIFO"). Never blocks on a FIFO.
int open_regular_file(const std::string& path, std::string& error);

// Reads the whole regular file path into out when it holds at most max_bytes; false with
// `error` set otherwise.
bool read_regular_file(const std::string& path, uint64_t max_bytes, std::string& out, std::string& error);

// Reads fd (a pipe, stdin) to its end into out, stopping with `error` set ("too large: ...")
// one read past max_bytes: an endless stream is refused, never held in memory.
bool read_fd_bounded(int fd, uint64_t max_bytes, std::string& out, std::string& error);

}  // namespace npud
