// The one error type for bad input: names the file and the byte offset, so the user
// can find the problem. The CLI turns it into exit code 2.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace npud {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, uint64_t offset, const std::string& what, bool has_offset = true)
      : std::runtime_error(what), file_(std::move(file)), offset_(offset), has_offset_(has_offset) {}
  const std::string& file() const { return file_; }
  uint64_t offset() const { return offset_; }
  bool has_offset() const { return has_offset_; }
  // "path: byte 1234: message" (or "path: message" when no offset applies)
  std::string describe() const;

 private:
  std::string file_;
  uint64_t offset_;
  bool has_offset_;
};

}  // namespace npud
