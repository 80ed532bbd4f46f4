// The zip container torch.save writes (torch >= 1.6): every entry stored uncompressed, so an
// entry's bytes are a slice of the file. Only the central directory and local headers are
// parsed (zip64 included); nothing is inflated: a compressed entry is reported, not read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npud {

// Archives with more entries than this are refused (a state_dict of 100k tensors has 100k+4).
inline constexpr uint64_t kMaxZipEntries = uint64_t(1) << 22;

struct ZipEntry {
  std::string name;
  uint16_t method = 0;        // 0 = stored
  uint64_t data_offset = 0;   // first byte of the entry's data in the file
  uint64_t size = 0;          // bytes (compressed size; equals the data size when stored)
  uint64_t header_offset = 0; // its local header, for errors
};

// Parses the archive held in `bytes` (the whole file). Throws InputError naming `name` and the
// byte offset for anything malformed: no end record, a directory or local header out of the
// file, an entry whose data runs past the end, more than kMaxZipEntries entries.
std::vector<ZipEntry> read_zip_directory(std::string_view bytes, const std::string& name);

}  // namespace npud
