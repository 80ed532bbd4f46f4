// See launch_captures.hpp: capture file names (their tags: a pid, a rank), listing the
// captures in a capture folder, and locking it.
#include "cli/launch_captures.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace npud {
namespace {

namespace fs = std::filesystem;

// The tag of a capture file's name: what lies between "capture." and ".npud.json" (the shim's
// _autostart names them), or "" for any other name.
std::string_view capture_tag(std::string_view name) {
  constexpr std::string_view kPrefix = "capture.", kSuffix = ".npud.json";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) || !name.ends_with(kSuffix))
    return {};
  return name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
}

bool all_digits(std::string_view s) { return !s.empty() && s.find_first_not_of("0123456789") == s.npos; }

// capture.<pid>.npud.json: the capture of another process of the run, when several inherited
// NPUD_CAPTURE.
bool is_other_process_capture(const std::string& name) { return all_digits(capture_tag(name)); }

// capture.rank<R>.npud.json: the capture of the worker of rank R of a distributed launch
// (torchrun, accelerate, deepspeed set RANK); -1 for any other name.
int rank_of_capture(const std::string& name) {
  std::string_view tag = capture_tag(name);
  if (!tag.starts_with("rank") || !all_digits(tag.substr(4)) || tag.size() > 13) return -1;
  int rank = 0;
  std::from_chars(tag.data() + 4, tag.data() + tag.size(), rank);
  return rank;
}

// The non-empty captures in dir whose name `keep` accepts, sorted by name.
template <typename Keep>
std::vector<std::string> captures_in(const std::string& dir, Keep keep) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (keep(it->path().filename().string()) && it->is_regular_file(size_ec) && it->file_size(size_ec) > 0 && !size_ec)
      out.push_back(fs::absolute(it->path()).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> other_process_captures(const std::string& dir) {
  return captures_in(dir, is_other_process_capture);
}

std::vector<std::string> rank_captures(const std::string& dir) {
  std::vector<std::string> out = captures_in(dir, [](const std::string& n) { return rank_of_capture(n) >= 0; });
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return rank_of_capture(fs::path(a).filename().string()) < rank_of_capture(fs::path(b).filename().string());
  });
  return out;
}

bool lock_capture_dir(const std::string& dir) {
  std::string path = (fs::path(dir) / ".npu-doctor.lock").string();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    std::cerr << fmt::format("npu-doctor: error: cannot lock {}: {}\n", path, std::strerror(errno));
    return false;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      std::cerr << fmt::format("npu-doctor: error: another npu-doctor run is writing its capture in {}: wait for "
                               "it, or give this one another --capture-dir\n", dir);
    else
      std::cerr << fmt::format("npu-doctor: error: cannot lock {}: {}\n", path, std::strerror(err));
    return false;
  }
  return true;  // fd stays open (and locked) until the process exits
}

}  // namespace npud
