// Progress on stderr for long work: only when stderr is a terminal and not --quiet,
// redrawn at most a few times a second, erased when done.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace npud {

class Progress {
 public:
  Progress(std::string label, bool wanted);
  bool enabled() const { return enabled_; }
  void update(uint64_t done, uint64_t total);  // total 0 = unknown
  void finish();

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace npud
