#include "numeric/stored_zip.hpp"

#include <fmt/format.h>

#include "util/input_error.hpp"

namespace npud {

namespace {

constexpr uint32_t kEndSig = 0x06054b50, kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50;
constexpr uint32_t kCentralSig = 0x02014b50, kLocalSig = 0x04034b50;
constexpr uint64_t kEndSize = 22, kLocator64Size = 20, kEnd64Size = 56, kCentralSize = 46, kLocalSize = 30;

// Little-endian reads at `at`; the caller has checked at + N <= bytes.size().
uint64_t le(std::string_view b, uint64_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | uint8_t(b[at + i]);
  return v;
}

struct Reader {
  std::string_view b;
  const std::string& name;

  [[noreturn]] void fail(uint64_t at, const std::string& what) const { throw InputError(name, at, what); }
  void need(uint64_t at, uint64_t n, const char* what) const {
    if (at > b.size() || n > b.size() - at)
      fail(std::min<uint64_t>(at, b.size()), fmt::format("truncated zip archive: {} runs past the end of the file "
                                                         "({} bytes)", what, b.size()));
  }

  // The end-of-central-directory record: torch writes no archive comment, so it is the last
  // 22 bytes; a comment (up to 64 KiB) is looked past.
  uint64_t find_end() const {
    if (b.size() < kEndSize) fail(0, "not a zip archive (too short for its end record)");
    uint64_t lowest = b.size() - kEndSize > 0xffff ? b.size() - kEndSize - 0xffff : 0;
    for (uint64_t at = b.size() - kEndSize + 1; at-- > lowest;)
      if (le(b, at, 4) == kEndSig && le(b, at + 20, 2) == b.size() - at - kEndSize) return at;
    fail(b.size(), "not a zip archive (no end-of-central-directory record)");
  }
};

}  // namespace

std::vector<ZipEntry> read_zip_directory(std::string_view bytes, const std::string& name) {
  Reader r{bytes, name};
  const uint64_t end = r.find_end();
  uint64_t count = le(bytes, end + 10, 2), cd_size = le(bytes, end + 12, 4), cd_offset = le(bytes, end + 16, 4);
  if (le(bytes, end + 4, 2) != 0 || le(bytes, end + 6, 2) != 0)
    r.fail(end, "multi-disk zip archives are not read");
  if (count == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {
    if (end < kLocator64Size || le(bytes, end - kLocator64Size, 4) != kLocator64Sig)
      r.fail(end, "zip64 sizes without a zip64 end-record locator");
    uint64_t at = le(bytes, end - kLocator64Size + 8, 8);
    r.need(at, kEnd64Size, "the zip64 end record");
    if (le(bytes, at, 4) != kEnd64Sig) r.fail(at, "no zip64 end record where its locator points");
    count = le(bytes, at + 32, 8);
    cd_size = le(bytes, at + 40, 8);
    cd_offset = le(bytes, at + 48, 8);
  }
  if (count > kMaxZipEntries)
    r.fail(end, fmt::format("{} entries in the zip archive, over the limit of {}", count, kMaxZipEntries));
  r.need(cd_offset, cd_size, "the central directory");
  if (count > cd_size / kCentralSize)
    r.fail(end, fmt::format("the end record claims {} entries in a central directory of {} bytes", count, cd_size));

  std::vector<ZipEntry> out;
  out.reserve(size_t(count));
  uint64_t at = cd_offset;
  const uint64_t cd_end = cd_offset + cd_size;
  for (uint64_t i = 0; i < count; ++i) {
    if (at > cd_end || cd_end - at < kCentralSize) r.fail(at, "central directory ends inside an entry");
    if (le(bytes, at, 4) != kCentralSig) r.fail(at, "expected a central directory entry (PK\\1\\2)");
    ZipEntry e;
    uint64_t flags = le(bytes, at + 8, 2);
    e.method = uint16_t(le(bytes, at + 10, 2));
    e.size = le(bytes, at + 20, 4);
    uint64_t usize = le(bytes, at + 24, 4);
    uint64_t name_len = le(bytes, at + 28, 2), extra_len = le(bytes, at + 30, 2), comment_len = le(bytes, at + 32, 2);
    e.header_offset = le(bytes, at + 42, 4);
    uint64_t next = at + kCentralSize + name_len + extra_len + comment_len;
    if (next > cd_end) r.fail(at, "central directory entry runs past the directory's end");
    e.name.assign(bytes.substr(at + kCentralSize, name_len));
    if (flags & 1) r.fail(at, fmt::format("zip entry '{}' is encrypted", e.name));
    // zip64 extra field: the 64-bit values of the fields saturated above, in this order.
    uint64_t x = at + kCentralSize + name_len, x_end = x + extra_len;
    while (x + 4 <= x_end) {
      uint64_t id = le(bytes, x, 2), len = le(bytes, x + 2, 2);
      if (x + 4 + len > x_end) r.fail(x, "zip extra field runs past its entry");
      if (id == 1) {
        uint64_t p = x + 4, p_end = p + len;
        for (uint64_t* field : {&usize, &e.size, &e.header_offset}) {
          if (*field != 0xffffffff) continue;
          if (p + 8 > p_end) r.fail(x, "zip64 extra field is shorter than the values it replaces");
          *field = le(bytes, p, 8);
          p += 8;
        }
      }
      x += 4 + len;
    }
    if (e.method == 0 && usize != e.size)
      r.fail(at, fmt::format("stored zip entry '{}' has compressed size {} but size {}", e.name, e.size, usize));
    r.need(e.header_offset, kLocalSize, "a local file header");
    if (le(bytes, e.header_offset, 4) != kLocalSig)
      r.fail(e.header_offset, fmt::format("expected the local header of '{}' (PK\\3\\4)", e.name));
    e.data_offset = e.header_offset + kLocalSize + le(bytes, e.header_offset + 26, 2) +
                    le(bytes, e.header_offset + 28, 2);
    r.need(e.data_offset, e.size, "a zip entry's data");
    out.push_back(std::move(e));
    at = next;
  }
  return out;
}

}  // namespace npud
