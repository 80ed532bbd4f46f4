#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "util/escape.hpp"

namespace npud {

Progress::Progress(std::string label, bool wanted)
    : label_(terminal_safe(label)),   // a file name: shown, never obeyed by the terminal
      enabled_(wanted && ::isatty(STDERR_FILENO)) {}

void Progress::update(uint64_t done, uint64_t total) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  drawn_ = true;
  double mb = double(done) / 1e6;
  if (total > 0) std::fprintf(stderr, "\r%s: %3.0f%% (%.0f MB)\x1b[K", label_.c_str(), 100.0 * double(done) / double(total), mb);
  else std::fprintf(stderr, "\r%s: %.0f MB\x1b[K", label_.c_str(), mb);
  std::fflush(stderr);
}

void Progress::finish() {
  if (enabled_ && drawn_) std::fprintf(stderr, "\r\x1b[K");
  drawn_ = false;
}

}  // namespace npud
