#include "source/source_snippet.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace npud {

namespace fs = std::filesystem;

namespace {

bool is_under(const fs::path& p, const fs::path& root) {
  return std::mismatch(root.begin(), root.end(), p.begin(), p.end()).first == root.end();
}

// Kernel pseudo-files: the process's environment, memory, devices. Never source.
bool is_system_path(const fs::path& p) {
  for (const char* dir : {"/proc", "/sys", "/dev"})
    if (is_under(p, dir)) return true;
  return false;
}

std::string roots_text(const SnippetPolicy& policy) {
  std::string out;
  for (const fs::path& r : policy.roots) out += (out.empty() ? "" : ", ") + r.string();
  return out.empty() ? "none" : out;
}

// Reads lines [first, last] of an open file, at most kMaxSnippetBytes in all; each line's
// text cut a little past kMaxSnippetLineChars (the report cuts it at that, UTF-8-safely).
// False when the byte limit came before line `needed`.
bool read_lines(int fd, int first, int last, int needed, Snippet& s) {
  constexpr size_t kKept = kMaxSnippetLineChars + 4;
  char buf[1 << 16];
  uint64_t total = 0;
  int n = 1;
  std::string line;
  auto end_line = [&] {
    if (n >= first && n <= last) {
      if (s.lines.empty()) s.first_line = n;
      s.lines.push_back(std::move(line));
    }
    line.clear();
    ++n;
  };
  while (n <= last && total < kMaxSnippetBytes) {
    ssize_t got = ::read(fd, buf, size_t(std::min<uint64_t>(sizeof buf, kMaxSnippetBytes - total)));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {  // end of file (or a read error): the last line has no newline
      if (!line.empty()) end_line();
      return true;
    }
    total += uint64_t(got);
    for (ssize_t i = 0; i < got && n <= last; ++i) {
      if (buf[i] == '\n') end_line();
      else if (n >= first && line.size() < kKept) line += buf[i];
    }
  }
  // The byte limit inside a shown line (one very long line): shown as far as it was read.
  if (n <= last && n >= needed && !line.empty()) end_line();
  return n > needed;
}

}  // namespace

SnippetPolicy snippet_policy(const Trace* trace, bool program_ran_here) {
  SnippetPolicy p;
  auto add = [&p](const fs::path& dir) {
    std::error_code ec;
    fs::path real = fs::canonical(dir, ec);
    // Not "/": a root that holds everything would make the rule no rule.
    if (ec || real == real.root_path() || is_system_path(real)) return;
    if (std::find(p.roots.begin(), p.roots.end(), real) == p.roots.end()) p.roots.push_back(real);
  };
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (!ec) add(cwd);
  if (trace && program_ran_here) {
    fs::path recorded(std::string(trace->env_value("cwd")));
    if (!recorded.empty()) add(recorded);
    else recorded = cwd;
    std::string_view argv = trace->env_value("argv");
    fs::path script(std::string(argv.substr(0, argv.find(' '))));
    if (script.extension() == ".py") add((script.is_relative() ? recorded / script : script).parent_path());
  }
  return p;
}

int open_source_file(const std::string& file, const SnippetPolicy* policy, std::string& withheld) {
  withheld.clear();
  std::error_code ec;
  fs::path named = fs::absolute(fs::path(file), ec).lexically_normal();
  if (ec) return -1;
  const std::string refused_system = "a system file (/proc, /sys, /dev) is never shown";
  if (is_system_path(named)) {
    withheld = refused_system;
    return -1;
  }
  fs::path real = fs::canonical(named, ec);
  if (ec) return -1;  // not on this machine (or not reachable): nothing to show, nothing to refuse
  if (is_system_path(real)) {
    withheld = refused_system;
    return -1;
  }
  if (!fs::is_regular_file(real, ec)) {
    withheld = "not a regular file";
    return -1;
  }
  if (policy && real.extension() != ".py") {
    withheld = "only Python source files (*.py) are shown";
    return -1;
  }
  if (policy && std::none_of(policy->roots.begin(), policy->roots.end(), [&](const fs::path& r) { return is_under(real, r); })) {
    withheld = fmt::format("outside the folders source is shown from ({}): run npu-doctor in the program's folder "
                           "to see it",
                           roots_text(*policy));
    return -1;
  }
  return open_regular_file(real.string(), withheld);
}

std::vector<std::string> read_source_lines(const std::string& file, const SnippetPolicy* policy) {
  std::vector<std::string> lines;
  std::string withheld;
  int fd = open_source_file(file, policy, withheld);
  if (fd < 0) return lines;
  char buf[1 << 16];
  uint64_t total = 0;
  std::string line;
  while (total < kMaxSnippetBytes) {
    ssize_t got = ::read(fd, buf, size_t(std::min<uint64_t>(sizeof buf, kMaxSnippetBytes - total)));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    total += uint64_t(got);
    for (ssize_t i = 0; i < got; ++i) {
      if (buf[i] == '\n') lines.push_back(std::move(line)), line.clear();
      else line += buf[i];
    }
  }
  ::close(fd);
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

Snippet read_snippet(const Location& loc, int context, const SnippetPolicy& policy) {
  Snippet s;
  if (loc.file.empty() || loc.line <= 0) return s;
  int fd = open_source_file(loc.file, &policy, s.withheld);
  if (fd < 0) return s;
  const int first = std::max(1, loc.line - context), last = loc.line + context;
  bool reached = read_lines(fd, first, last, loc.line, s);
  ::close(fd);
  if (!reached) {
    s.lines.clear();
    s.withheld = fmt::format("line {} is past the first {} MiB of the file, which is all that is read", loc.line,
                             kMaxSnippetBytes >> 20);
  }
  return s;
}

std::string SourceLineCache::line_text(const std::string& file, int line) {
  if (file.empty() || line <= 0) return {};
  auto it = files_.find(file);
  if (it == files_.end()) it = files_.emplace(file, read_source_lines(file, policy_)).first;
  if (size_t(line) > it->second.size()) return {};
  return std::string(trim(it->second[size_t(line) - 1]));
}

void SourceLineCache::use_text(const std::string& file, std::string_view text) {
  std::vector<std::string>& lines = files_[file];
  lines.clear();
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace npud
