#include "util/regular_file.hpp"
#include "numeric/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "util/input_error.hpp"

namespace npud {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

// A strict parser for the one Python literal numpy writes as the header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with spaces and '\n'.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, uint64_t base, const std::string& name)
      : s_(text), base_(base), name_(name) {}

  void parse(NpyHeader& h) {
    skip_ws();
    expect('{');
    bool have_descr = false, have_order = false, have_shape = false;
    while (true) {
      skip_ws();
      if (peek() == '}') { ++i_; break; }
      size_t key_at = i_;
      std::string key = string_literal();
      skip_ws();
      expect(':');
      skip_ws();
      auto seen = [&](bool& flag) {
        if (flag) fail(key_at, fmt::format("header repeats the key '{}'", key));
        flag = true;
      };
      if (key == "descr") {
        seen(have_descr);
        if (peek() == '[') fail(i_, "structured dtypes (a list as 'descr') are not supported");
        descr_at_ = i_;
        h.descr = string_literal();
      } else if (key == "fortran_order") {
        seen(have_order);
        h.fortran_order = boolean();
      } else if (key == "shape") {
        seen(have_shape);
        shape(h.shape);
      } else {
        fail(key_at, fmt::format("unexpected key '{}' in the header (only descr, fortran_order, shape)", key));
      }
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      skip_ws();
      if (peek() == '}') { ++i_; break; }
      fail(i_, "expected ',' or '}' in the header dictionary");
    }
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\0'))
      ++i_;
    if (i_ != s_.size()) fail(i_, "unexpected text after the header dictionary");
    if (!have_descr || !have_order || !have_shape)
      fail(0, "header lacks one of 'descr', 'fortran_order', 'shape'");
  }

  size_t descr_at() const { return descr_at_; }

  [[noreturn]] void fail(size_t at, const std::string& what) const { throw InputError(name_, base_ + at, what); }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(i_, fmt::format("expected '{}' in the header", c));
    ++i_;
  }
  std::string string_literal() {
    char q = peek();
    if (q != '\'' && q != '"') fail(i_, "expected a quoted string in the header");
    size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\' || s_[i_] == '\n') fail(i_, "escapes and newlines are not allowed in header strings");
      ++i_;
    }
    if (i_ >= s_.size()) fail(start - 1, "unterminated string in the header");
    std::string out(s_.substr(start, i_ - start));
    ++i_;
    return out;
  }
  bool boolean() {
    if (s_.substr(i_, 4) == "True") { i_ += 4; return true; }
    if (s_.substr(i_, 5) == "False") { i_ += 5; return false; }
    fail(i_, "expected True or False for 'fortran_order'");
  }
  void shape(std::vector<int64_t>& out) {
    expect('(');
    while (true) {
      skip_ws();
      if (peek() == ')') { ++i_; break; }
      size_t at = i_;
      if (peek() < '0' || peek() > '9') fail(i_, "expected a non-negative integer in 'shape'");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (INT64_MAX - 9) / 10) fail(at, "dimension in 'shape' is too large");
        v = v * 10 + (s_[i_++] - '0');
      }
      if (peek() == 'L') ++i_;  // Python 2 longs, written by very old numpy
      out.push_back(v);
      if (out.size() > 64) fail(at, "more than 64 dimensions in 'shape'");
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      skip_ws();
      if (peek() == ')') { ++i_; break; }
      fail(i_, "expected ',' or ')' in 'shape'");
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  uint64_t base_;
  const std::string& name_;
  size_t descr_at_ = 0;
};

void parse_descr(NpyHeader& h, const HeaderParser& p) {
  const std::string& d = h.descr;
  size_t at = p.descr_at();
  if (d.find('O') != std::string::npos)
    p.fail(at, fmt::format("object dtype '{}': the data is a Python pickle, which npu-doctor never loads "
                           "(save the tensor as a numeric array instead)", d));
  if (d.size() < 2) p.fail(at, fmt::format("unsupported dtype '{}'", d));
  char order = d[0];
  std::string_view code(d);
  if (order == '<' || order == '>' || order == '|' || order == '=') code.remove_prefix(1);
  else order = '=';
  static const struct { std::string_view code; DType dtype; } kCodes[] = {
      {"f2", DType::F16}, {"f4", DType::F32}, {"f8", DType::F64}, {"i1", DType::I8}, {"i2", DType::I16},
      {"i4", DType::I32}, {"i8", DType::I64}, {"u1", DType::U8},  {"u2", DType::U16}, {"u4", DType::U32},
      {"u8", DType::U64}, {"b1", DType::Bool}};
  std::optional<DType> found;
  for (const auto& c : kCodes)
    if (c.code == code) found = c.dtype;
  if (!found)
    p.fail(at, fmt::format("unsupported dtype '{}' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1)", d));
  h.dtype = *found;
  size_t size = dtype_size(h.dtype);
  if (order == '|' && size > 1) p.fail(at, fmt::format("dtype '{}' has no byte order ('|' is for 1-byte types)", d));
  bool little_machine = std::endian::native == std::endian::little;
  h.byte_swapped = size > 1 && ((order == '>' && little_machine) || (order == '<' && !little_machine));
}

// Parses the header from `head` (the file's first bytes, possibly all of it) and checks
// that the file's total size matches it.
NpyHeader parse_header(std::string_view head, uint64_t file_size, const std::string& name) {
  if (head.size() < 10 || head.substr(0, 6) != kMagic) {
    if (head.size() < kMagic.size() && head == kMagic.substr(0, head.size()))
      throw InputError(name, head.size(), "truncated .npy file (ends inside the magic string)");
    if (head.substr(0, std::min<size_t>(6, head.size())) != kMagic.substr(0, std::min<size_t>(6, head.size())))
      throw InputError(name, 0, "not a .npy file (no \\x93NUMPY magic string)");
    throw InputError(name, head.size(), "truncated .npy file (ends before the header length)");
  }
  unsigned major = uint8_t(head[6]), minor = uint8_t(head[7]);
  if (major < 1 || major > 3 || minor != 0)
    throw InputError(name, 6, fmt::format("unsupported .npy format version {}.{} (1.0, 2.0 and 3.0 are read)",
                                           major, minor));
  uint64_t header_len, header_start;
  if (major == 1) {
    header_len = uint8_t(head[8]) | (uint64_t(uint8_t(head[9])) << 8);
    header_start = 10;
  } else {
    if (head.size() < 12) throw InputError(name, head.size(), "truncated .npy file (ends before the header length)");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | uint8_t(head[8 + i]);
    header_start = 12;
  }
  if (header_len > kMaxNpyHeader)
    throw InputError(name, 8, fmt::format("header length {} is over the {} byte limit", header_len, kMaxNpyHeader));
  if (head.size() < header_start + header_len)
    throw InputError(name, head.size(), fmt::format("truncated .npy file (header of {} bytes ends at byte {})",
                                                    header_len, header_start + header_len));
  NpyHeader h;
  HeaderParser p(head.substr(header_start, header_len), header_start, name);
  p.parse(h);
  parse_descr(h, p);
  h.data_offset = header_start + header_len;
  uint64_t count = 1;
  for (int64_t dim : h.shape)
    if (__builtin_mul_overflow(count, uint64_t(dim), &count))
      throw InputError(name, header_start, "the number of elements in 'shape' overflows 64 bits");
  uint64_t bytes;
  if (__builtin_mul_overflow(count, uint64_t(dtype_size(h.dtype)), &bytes) ||
      __builtin_add_overflow(bytes, h.data_offset, &bytes))
    throw InputError(name, header_start, "the data size implied by 'shape' overflows 64 bits");
  h.count = count;
  if (file_size != bytes)
    throw InputError(name, h.data_offset,
                     fmt::format("the header says {} elements of {} ({} data bytes) but the file holds {} data bytes "
                                 "({})", count, h.descr, bytes - h.data_offset,
                                 file_size > h.data_offset ? file_size - h.data_offset : 0,
                                 file_size < bytes ? "truncated file or lying header" : "trailing bytes or lying header"));
  return h;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

uint64_t open_and_stat(const std::string& path, Fd& f) {
  std::string error;
  f.fd = open_regular_file(path, error);   // a FIFO or device is refused, never waited on
  if (f.fd < 0) throw InputError(path, 0, error, false);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw InputError(path, 0, fmt::format("cannot stat: {}", std::strerror(errno)), false);
  return uint64_t(st.st_size);
}

}  // namespace

NpyHeader parse_npy(std::string_view bytes, const std::string& name) {
  return parse_header(bytes, bytes.size(), name);
}

NpyHeader read_npy_header(const std::string& path) {
  Fd f;
  uint64_t size = open_and_stat(path, f);
  std::string head(std::min<uint64_t>(size, 12 + kMaxNpyHeader), '\0');
  size_t got = 0;
  while (got < head.size()) {
    ssize_t n = ::pread(f.fd, head.data() + got, head.size() - got, off_t(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  head.resize(got);
  return parse_header(head, size, path);
}

MappedNpy::MappedNpy(const std::string& path) : file_(path) {
  if (file_.bytes().empty()) throw InputError(path, 0, "empty file (not a .npy file)");
  header_ = parse_npy(file_.bytes(), path);
  file_.advise_sequential();
}

TensorView MappedNpy::view() const {
  TensorView v;
  v.dtype = header_.dtype;
  v.byte_swapped = header_.byte_swapped;
  v.data = file_.bytes().data() + header_.data_offset;
  v.count = header_.count;
  return v;
}

}  // namespace npud
