// `analyze -`: the readers need a file they can seek in and map (and detect the format from
// its first bytes), so stdin is copied to a private temporary file first, removed afterwards.
#pragma once

#include <string>

namespace npud {

class StdinCopy {
 public:
  // Copies all of stdin. Throws std::runtime_error naming what failed.
  StdinCopy();
  ~StdinCopy();
  StdinCopy(const StdinCopy&) = delete;
  StdinCopy& operator=(const StdinCopy&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace npud
