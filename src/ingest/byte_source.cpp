#include "ingest/byte_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include "util/regular_file.hpp"
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "util/input_error.hpp"
#include "ingest/isal_loader.hpp"

namespace npud {

namespace {

class FileSource final : public ByteSource {
 public:
  FileSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
  ~FileSource() override { ::close(fd_); }
  size_t read(char* dst, size_t n) override {
    for (;;) {
      ssize_t got = ::read(fd_, dst, n);
      if (got >= 0) {
        consumed_ += uint64_t(got);
        return size_t(got);
      }
      if (errno == EINTR) continue;
      throw InputError(name_, consumed_, std::string("read error: ") + std::strerror(errno));
    }
  }
  uint64_t consumed() const override { return consumed_; }
  uint64_t total() const override { return size_; }
  std::string name_;

 private:
  int fd_;
  uint64_t size_;
  uint64_t consumed_ = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  size_t read(char* dst, size_t n) override {
    size_t k = std::min(n, data_.size() - pos_);
    std::memcpy(dst, data_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  uint64_t consumed() const override { return pos_; }
  uint64_t total() const override { return data_.size(); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// The inflaters behind GzipSource: zlib, and isa-l's igzip where the build found it (2.5x
// zlib's speed on trace JSON: bench/README.md "gzip: isa-l"). Each inflates one gzip member
// at a time (header, data, CRC-32 and size checked) from the input into the output it is given.
enum class Inflated { Progress, MemberEnd, Corrupt };

class ZlibInflater {
 public:
  explicit ZlibInflater(const std::string& name) {
    std::memset(&z_, 0, sizeof z_);
    // 16 + MAX_WBITS: expect a gzip header and trailer.
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw InputError(name, 0, "cannot initialise zlib", false);
  }
  ~ZlibInflater() { inflateEnd(&z_); }
  void next_member() { inflateReset(&z_); }
  void set_input(char* p, size_t n) {
    z_.next_in = reinterpret_cast<Bytef*>(p);
    z_.avail_in = uInt(n);
  }
  void set_output(char* p, size_t n) {
    z_.next_out = reinterpret_cast<Bytef*>(p);
    z_.avail_out = uInt(n);
  }
  unsigned char* next_in() { return z_.next_in; }
  size_t avail_in() const { return z_.avail_in; }
  void skip_input(size_t k) {
    z_.next_in += k;
    z_.avail_in -= uInt(k);
  }
  const char* next_out() const { return reinterpret_cast<const char*>(z_.next_out); }
  size_t avail_out() const { return z_.avail_out; }
  Inflated inflate_some(std::string& why) {
    int rc = inflate(&z_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) return Inflated::MemberEnd;
    if (rc == Z_OK || rc == Z_BUF_ERROR) return Inflated::Progress;   // Z_BUF_ERROR: needs more input
    why = z_.msg ? z_.msg : "zlib error " + std::to_string(rc);
    return Inflated::Corrupt;
  }

 private:
  z_stream z_;
};

#ifdef NPUD_HAVE_ISAL
class IsalInflater {
 public:
  IsalInflater(const std::string&, const IsalApi& api) : api_(api), s_(std::make_unique<inflate_state>()) {
    next_member();
  }
  // A fresh state for the next member; the buffers stay where they are.
  void next_member() {
    uint8_t *in = s_->next_in, *out = s_->next_out;
    uint32_t avail_in = s_->avail_in, avail_out = s_->avail_out;
    api_.inflate_init(s_.get());
    s_->crc_flag = ISAL_GZIP;   // parse the header, check the trailer's CRC-32 and size
    s_->next_in = in;
    s_->avail_in = avail_in;
    s_->next_out = out;
    s_->avail_out = avail_out;
  }
  void set_input(char* p, size_t n) {
    s_->next_in = reinterpret_cast<uint8_t*>(p);
    s_->avail_in = uint32_t(n);
  }
  void set_output(char* p, size_t n) {
    s_->next_out = reinterpret_cast<uint8_t*>(p);
    s_->avail_out = uint32_t(n);
  }
  unsigned char* next_in() { return s_->next_in; }
  size_t avail_in() const { return s_->avail_in; }
  void skip_input(size_t k) {
    s_->next_in += k;
    s_->avail_in -= uint32_t(k);
  }
  const char* next_out() const { return reinterpret_cast<const char*>(s_->next_out); }
  size_t avail_out() const { return s_->avail_out; }
  Inflated inflate_some(std::string& why) {
    uint32_t in_before = s_->avail_in, out_before = s_->avail_out;
    int rc = api_.inflate(s_.get());
    if (rc < 0) {
      why = reason(rc);
      return Inflated::Corrupt;
    }
    if (s_->block_state == ISAL_BLOCK_FINISH) return Inflated::MemberEnd;
    if (s_->avail_in == in_before && s_->avail_out == out_before && in_before > 0 && out_before > 0) {
      why = "no progress";
      return Inflated::Corrupt;
    }
    return Inflated::Progress;
  }

 private:
  static const char* reason(int rc) {   // zlib's words for the same faults
    switch (rc) {
      case ISAL_INVALID_BLOCK: return "invalid block";
      case ISAL_INVALID_SYMBOL: return "invalid symbol";
      case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
      case ISAL_INVALID_WRAPPER: return "incorrect header check";
      case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
      case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
      default: return "isa-l error";
    }
  }
  const IsalApi& api_;
  std::unique_ptr<inflate_state> s_;   // ~40 KB of tables: on the heap
};
#endif

// Inflates gzip members one after another (concatenated .gz files are valid gzip; zero
// padding between members is tolerated). Errors name the decompressed offset they occur at.
template <typename Inflater>
class GzipSource final : public ByteSource {
 public:
  // `extra` goes to the inflater after the name (isa-l's entry points).
  template <typename... Extra>
  GzipSource(std::unique_ptr<ByteSource> inner, std::string name, Extra&&... extra)
      : inner_(std::move(inner)), name_(std::move(name)), in_(1 << 20), z_(name_, std::forward<Extra>(extra)...) {}

  size_t read(char* dst, size_t n) override {
    if (done_ || n == 0) return 0;
    z_.set_output(dst, std::min<size_t>(n, 1u << 30));
    std::string why;
    while (z_.avail_out() > 0) {
      if (member_ended_) {
        if (!next_member(dst)) {
          done_ = true;
          break;
        }
        continue;
      }
      if (z_.avail_in() == 0 && !refill()) {
        if (member_started_)
          throw InputError(name_, out_ + produced(dst),
                           "gzip data ends before the end of the compressed stream: file truncated?");
        done_ = true;
        break;
      }
      member_started_ = true;
      check_header_flags(dst);
      size_t in_before = z_.avail_in();
      switch (z_.inflate_some(why)) {
        case Inflated::MemberEnd:
          member_ended_ = true;
          break;
        case Inflated::Corrupt:
          throw InputError(name_, out_ + produced(dst), "corrupt gzip data (" + why + ")");
        case Inflated::Progress:
          break;
      }
      member_pos_ += in_before - z_.avail_in();
    }
    size_t k = produced(dst);
    out_ += k;
    return k;
  }
  uint64_t consumed() const override { return inner_->consumed(); }
  uint64_t total() const override { return inner_->total(); }
  bool compressed() const override { return true; }

 private:
  size_t produced(const char* dst) const { return size_t(z_.next_out() - dst); }

  bool refill() {
    size_t got = inner_->read(in_.data(), in_.size());
    z_.set_input(in_.data(), got);
    return got > 0;
  }

  // The member's flag byte (its 4th) must not set the reserved bits: zlib refuses such a
  // header, isa-l would read on, and both inflaters must take the same files.
  void check_header_flags(const char* dst) {
    constexpr size_t kFlagByte = 3;
    if (member_pos_ > kFlagByte || member_pos_ + z_.avail_in() <= kFlagByte) return;
    if (z_.next_in()[kFlagByte - member_pos_] & 0xe0)
      throw InputError(name_, out_ + produced(dst), "corrupt gzip data (unknown header flags set)");
  }

  // After one member ended: another member may follow; zero padding is tolerated.
  bool next_member(const char* dst) {
    for (;;) {
      if (z_.avail_in() == 0 && !refill()) return false;
      size_t zeros = 0;
      while (zeros < z_.avail_in() && z_.next_in()[zeros] == 0) ++zeros;
      z_.skip_input(zeros);
      if (z_.avail_in() == 0) continue;
      if (z_.next_in()[0] != 0x1f)
        throw InputError(name_, out_ + produced(dst), "unexpected data after the end of the gzip stream");
      z_.next_member();
      member_started_ = member_ended_ = false;
      member_pos_ = 0;
      return true;
    }
  }

  std::unique_ptr<ByteSource> inner_;
  std::string name_;
  std::vector<char> in_;
  Inflater z_;
  uint64_t out_ = 0;
  bool done_ = false;
  bool member_started_ = false;
  bool member_ended_ = false;
  uint64_t member_pos_ = 0;   // input bytes of the current member consumed
};


// Peeks the first two bytes of a source and wraps it in a GzipSource when they are the magic.
class PeekedSource final : public ByteSource {
 public:
  PeekedSource(std::unique_ptr<ByteSource> inner, std::string head) : inner_(std::move(inner)), head_(std::move(head)) {}
  size_t read(char* dst, size_t n) override {
    if (pos_ < head_.size()) {
      size_t k = std::min(n, head_.size() - pos_);
      std::memcpy(dst, head_.data() + pos_, k);
      pos_ += k;
      return k;
    }
    return inner_->read(dst, n);
  }
  uint64_t consumed() const override { return inner_->consumed(); }
  uint64_t total() const override { return inner_->total(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string head_;
  size_t pos_ = 0;
};

std::unique_ptr<ByteSource> maybe_gunzip(std::unique_ptr<ByteSource> src, const std::string& name) {
  char head[2];
  size_t got = 0;
  while (got < 2) {
    size_t k = src->read(head + got, 2 - got);
    if (k == 0) break;
    got += k;
  }
  std::string h(head, got);
  auto peeked = std::make_unique<PeekedSource>(std::move(src), h);
  if (has_gzip_magic(h)) {
#ifdef NPUD_HAVE_ISAL
    if (const IsalApi* isal = isal_api())
      return std::make_unique<GzipSource<IsalInflater>>(std::move(peeked), name, *isal);
#endif
    return std::make_unique<GzipSource<ZlibInflater>>(std::move(peeked), name);
  }
  return peeked;
}

}  // namespace

bool has_gzip_magic(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b;
}

std::unique_ptr<ByteSource> open_byte_source(const std::string& path) {
  std::string error;
  int fd = open_regular_file(path, error);   // a FIFO or device is refused, never waited on
  if (fd < 0) throw InputError(path, 0, error, false);
  struct stat st {};
  ::fstat(fd, &st);
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  uint64_t size = uint64_t(st.st_size);
  uint64_t hint = size, gz_hint = 0;
  unsigned char tail[4];
  if (size >= 18 && ::pread(fd, tail, 4, off_t(size - 4)) == 4) {
    uint64_t isize = uint64_t(tail[0]) | uint64_t(tail[1]) << 8 | uint64_t(tail[2]) << 16 | uint64_t(tail[3]) << 24;
    // ISIZE wraps at 4 GiB: a value below the compressed size means it wrapped
    gz_hint = isize >= size ? isize : size * 8;
  }
  auto file = std::make_unique<FileSource>(fd, size);
  file->name_ = path;
  auto src = maybe_gunzip(std::move(file), path);
  src->size_hint = src->compressed() ? gz_hint : hint;
  return src;
}

std::unique_ptr<ByteSource> memory_byte_source(std::string_view data, const std::string& name) {
  auto src = maybe_gunzip(std::make_unique<MemorySource>(data), name);
  src->size_hint = src->compressed() ? 0 : data.size();
  return src;
}

}  // namespace npud
