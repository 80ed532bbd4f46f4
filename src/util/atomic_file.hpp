// Writes a file so that readers see either the old content or the whole new one:
// data goes to a temporary file beside the target, which is renamed over it at commit().
// A run interrupted before commit() leaves the old report in place.
#pragma once

#include <fstream>
#include <string>

namespace npud {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // removes the temporary file if commit() was not reached
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  // Flushes, fsyncs, gives the file the permissions of the one it replaces (if any) and
  // renames it into place. Throws std::runtime_error on failure (the old file stays).
  void commit();

 private:
  std::string path_;
  std::string tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace npud
