// Sequential input for the streaming readers: a plain file, a gzip file (detected by its
// magic bytes, inflated on the fly) or a buffer in memory. Readers pull bytes in chunks and
// never hold the whole input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace npud {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes into dst; returns 0 only at the end of the input.
  // Throws InputError (offset = decompressed bytes delivered so far) on corrupt data.
  virtual size_t read(char* dst, size_t n) = 0;
  // For progress: bytes of the underlying file consumed so far, and its size (0 = unknown).
  virtual uint64_t consumed() const = 0;
  virtual uint64_t total() const = 0;
  virtual bool compressed() const { return false; }
  // Expected size of the (decompressed) content, for reserving memory; 0 = unknown.
  // For gzip it comes from the trailer (ISIZE, modulo 4 GiB), so it is only a hint.
  uint64_t size_hint = 0;
};

// Opens path; if it starts with the gzip magic (1f 8b) the content is inflated.
// Throws InputError (without offset) when the file cannot be opened.
std::unique_ptr<ByteSource> open_byte_source(const std::string& path);

// Reads from memory that must outlive the source; inflated if it starts with the gzip magic.
// name is the file name used in errors.
std::unique_ptr<ByteSource> memory_byte_source(std::string_view data, const std::string& name);

bool has_gzip_magic(std::string_view head);

}  // namespace npud
