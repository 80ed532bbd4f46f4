#include "cli/output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <iostream>

#include "util/escape.hpp"
#include "util/atomic_file.hpp"

namespace npud {

std::vector<std::string_view> formats_of_extension(std::string_view path) {
  std::string name(path.substr(path.rfind('/') == path.npos ? 0 : path.rfind('/') + 1));
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (name.ends_with(".html") || name.ends_with(".htm")) return {"html"};
  if (name.ends_with(".sarif") || name.ends_with(".sarif.json")) return {"sarif"};
  if (name.ends_with(".json")) return {"json", "sarif", "summary"};
  if (name.ends_with(".txt")) return {"text", "github"};
  return {};
}

CLI::Option* add_output_option(CLI::App& cmd, std::string& path, std::string* format) {
  CLI::Option* out = cmd.add_option("-o,--output", path,
                                    format ? "write the report to FILE instead of stdout (atomically; - is stdout); "
                                             "without --format, a .html/.json/.sarif/.txt FILE names the format"
                                           : "write the report to FILE instead of stdout (atomically; - is stdout)")
                         ->transform([](const std::string& value) { return value == "-" ? std::string() : value; });
  if (!format) return out;
  CLI::Option* format_option = cmd.get_option("--format");
  cmd.parse_complete_callback([&path, format, format_option] {
    std::vector<std::string_view> allowed = formats_of_extension(path);
    if (allowed.empty()) return;
    // Only formats the command writes: its --format check says which.
    auto writes = [&](std::string_view f) {
      std::string s(f);
      try {
        return format_option->get_validator()->operator()(s).empty();
      } catch (const CLI::OptionNotFound&) {   // no check: the command validates its format itself
        return true;
      }
    };
    if (format_option->count() == 0) {
      if (writes(allowed.front())) *format = allowed.front();
      return;
    }
    // A contradiction only where the command writes what the extension names (env writes no HTML).
    if (writes(allowed.front()) && std::find(allowed.begin(), allowed.end(), *format) == allowed.end())
      throw CLI::ValidationError("-o", fmt::format("{} names {} output, but --format is {}: drop --format, or name the "
                                                   "file for {}", path, allowed.front(), *format, *format));
  });
  return out;
}

CLI::Option* add_project_root_option(CLI::App& cmd, std::string& dir) {
  return cmd.add_option("--project-root", dir,
                        "sarif and github formats: name files relative to DIR, the repository's root for code scanning "
                        "(default: the nearest folder above the working directory with a .git, else the working "
                        "directory)")
      ->check(CLI::ExistingDirectory);
}

bool output_writable_or_report(const std::string& path, const std::vector<std::string>& inputs,
                               std::string_view option) {
  for (const std::string& input : inputs) protect_input(input);
  if (path.empty()) return true;
  if (path == "-" && option != "-o") {   // -o - is stdout; a baseline is a file to keep
    std::cerr << "npu-doctor: error: " << option << ": names a file to keep; - (stdout) is not one\n";
    return false;
  }
  try {
    AtomicFile(path).check_writable();
    return true;
  } catch (const std::exception& e) {
    std::cerr << "npu-doctor: error: " << option << ": " << terminal_safe(e.what()) << "\n";
    return false;
  }
}

namespace {
bool stdout_was_closed = false;
bool closed_at_start[3] = {false, false, false};
}

void guard_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // open() takes the lowest free number: this one. A file npu-doctor opens later never
    // becomes "stdout", so a report is never written into an input or a baseline.
    int got = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got != fd && got >= 0) ::close(got);
    closed_at_start[fd] = true;
    if (fd == STDOUT_FILENO) stdout_was_closed = true;
  }
}

void close_guarded_fds() {
  for (int fd = 0; fd <= 2; ++fd)
    if (closed_at_start[fd]) ::close(fd);
}

bool stdout_written_or_report() {
  errno = 0;
  bool failed = stdout_was_closed || std::cout.flush().fail();
  failed = std::fflush(stdout) != 0 || std::ferror(stdout) || failed;
  if (!failed) return true;
  int err = errno;
  std::cerr << "npu-doctor: error: cannot write the report to stdout: "
            << (stdout_was_closed ? "stdout is closed" : err ? std::strerror(err) : "write failed") << "\n";
  stdout_was_closed = false;   // said once
  std::cout.clear();
  std::clearerr(stdout);
  return false;
}

bool emit_report(const std::string& path, bool want_color,
                 const std::function<void(std::ostream&, bool color)>& render, bool say_where) {
  try {
    if (path.empty()) {
      render(std::cout, want_color && ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
      return stdout_written_or_report();
    } else {
      AtomicFile out(path);
      render(out.stream(), false);
      out.commit();
      if (say_where) std::cerr << "npu-doctor: report written to " << path << "\n";
    }
    return true;
  } catch (const std::exception& e) {
    std::cerr << "npu-doctor: error: " << e.what() << "\n";
    return false;
  }
}

}  // namespace npud
