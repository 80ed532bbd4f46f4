#include "ingest/json_stream.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "util/input_error.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace npud {

namespace {

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// First '"' or '\\' in [p, end), or end. May read up to 15 bytes past end (the buffer is padded).
inline const char* find_quote_or_backslash(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i bslash = _mm_set1_epi8('\\');
  while (p < end) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    int mask = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
    if (mask != 0) {
      const char* hit = p + __builtin_ctz(unsigned(mask));
      return hit < end ? hit : end;
    }
    p += 16;
  }
  return end;
#else
  while (p < end && *p != '"' && *p != '\\') ++p;
  return p;
#endif
}

// First of '"', '{', '}', '[', ']' in [p, end), or end (outside strings only these matter).
inline const char* find_structural(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i open = _mm_set1_epi8('{');   // '[' | 0x20 == '{'
  const __m128i close = _mm_set1_epi8('}');  // ']' | 0x20 == '}'
  const __m128i bit5 = _mm_set1_epi8(0x20);
  while (p < end) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i low = _mm_or_si128(v, bit5);
    __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote),
                               _mm_or_si128(_mm_cmpeq_epi8(low, open), _mm_cmpeq_epi8(low, close)));
    int mask = _mm_movemask_epi8(hit);
    if (mask != 0) {
      const char* h = p + __builtin_ctz(unsigned(mask));
      return h < end ? h : end;
    }
    p += 16;
  }
  return end;
#else
  while (p < end && *p != '"' && *p != '{' && *p != '}' && *p != '[' && *p != ']') ++p;
  return p;
#endif
}

const char* what_starts_with(int c) {
  if (c == '"') return "a string";
  if (c == '[') return "an array";
  if (c == '{') return "an object";
  if (c == '-' || (c >= '0' && c <= '9')) return "a number";
  if (c == 't' || c == 'f') return "a boolean";
  if (c == 'n') return "null";
  return nullptr;
}

}  // namespace

JsonEventStream::JsonEventStream(ByteSource& src, std::string name, std::function<bool(std::string_view)> wants_key,
                                 size_t chunk_bytes)
    : src_(src), name_(std::move(name)), wants_key_(std::move(wants_key)) {
  chunk_ = std::max<size_t>(chunk_bytes, 4096);
  cap_ = chunk_;
  buf_.reset(new char[cap_ + kPadding]);
  std::memset(buf_.get() + cap_, 0, kPadding);
}

JsonEventStream::~JsonEventStream() = default;

void JsonEventStream::fail(uint64_t offset, const std::string& msg) const { throw InputError(name_, offset, msg); }

std::string JsonEventStream::describe_byte(int c) const {
  if (c < 0) return "the end of the input";
  if (c >= 0x20 && c < 0x7f) return fmt::format("'{}'", char(c));
  return fmt::format("byte 0x{:02x}", c);
}

// Moves [keep_from, end_) to the front and reads more. Grows the buffer when a single value
// fills it. Returns false when no more bytes come.
bool JsonEventStream::fill(size_t keep_from) {
  if (eof_) return false;
  size_t keep = end_ - keep_from;
  if (keep_from > 0) {
    if (keep) std::memmove(buf_.get(), buf_.get() + keep_from, keep);
    base_ += keep_from;
    pos_ -= std::min(pos_, keep_from);
    end_ = keep;
  }
  if (end_ == cap_) {
    // One value spans the whole buffer: grow (the caller enforces the size limits).
    size_t ncap = cap_ * 2;
    std::unique_ptr<char[]> nb(new char[ncap + kPadding]);
    std::memcpy(nb.get(), buf_.get(), end_);
    buf_ = std::move(nb);
    cap_ = ncap;
  } else if (cap_ > chunk_ && keep < chunk_ / 2) {
    // A big value is gone: give the memory back.
    std::unique_ptr<char[]> nb(new char[chunk_ + kPadding]);
    std::memcpy(nb.get(), buf_.get(), end_);
    buf_ = std::move(nb);
    cap_ = chunk_;
  }
  size_t got = src_.read(buf_.get() + end_, cap_ - end_);
  std::memset(buf_.get() + end_ + got, 0, kPadding);
  end_ += got;
  if (on_chunk_) on_chunk_();
  if (got == 0) {
    eof_ = true;
    return false;
  }
  return true;
}

int JsonEventStream::skip_ws() {
  for (;;) {
    while (pos_ < end_) {
      char c = buf_[pos_];
      if (!is_ws(c)) return static_cast<unsigned char>(c);
      ++pos_;
    }
    if (!fill(pos_)) return -1;
  }
}

namespace {

inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

#if defined(__SSE2__)
inline uint64_t byte_mask(const char* p, __m128i (*pred)(__m128i)) {
  uint64_t m = 0;
  for (int k = 0; k < 4; ++k)
    m |= uint64_t(uint32_t(_mm_movemask_epi8(pred(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k))))))
         << (16 * k);
  return m;
}
#endif

}  // namespace

void JsonEventStream::open_bracket(size_t at, char c, ScanState& st, int base_depth) {
  if (base_depth + st.depth >= kMaxDepth)
    fail(base_ + at, fmt::format("JSON nested deeper than {} levels", kMaxDepth));
  st.kinds = (st.kinds << 1) | (c == '{' ? 1u : 0u);
  ++st.depth;
}

void JsonEventStream::close_bracket(size_t at, char c, ScanState& st) {
  bool is_obj = (st.kinds & 1u) != 0;
  if (st.depth == 0 || is_obj != (c == '}'))
    fail(base_ + at, fmt::format("unexpected '{}': brackets do not match", c));
  st.kinds >>= 1;
  --st.depth;
}

// Byte-wise scan of buf_[i, limit); returns the index past the value's end or kNpos.
size_t JsonEventStream::scan_bytes(size_t i, size_t limit, ScanState& st, int base_depth) {
  const char* b = buf_.get();
  if (st.escape && i < limit) {
    st.escape = false;
    ++i;
  }
  while (i < limit) {
    if (st.in_string) {
      const char* q = find_quote_or_backslash(b + i, b + limit);
      i = size_t(q - b);
      if (i >= limit) return kNpos;
      if (*q == '\\') {
        if (i + 1 >= limit) {
          st.escape = true;
          return kNpos;
        }
        i += 2;
        continue;
      }
      st.in_string = false;
      ++i;
      if (st.depth == 0) return i;  // a lone string value
      continue;
    }
    i = size_t(find_structural(b + i, b + limit) - b);
    if (i >= limit) return kNpos;
    char c = b[i];
    if (c == '"') {
      st.in_string = true;
    } else if (c == '{' || c == '[') {
      open_bracket(i, c, st, base_depth);
    } else {
      close_bracket(i, c, st);
      if (st.depth == 0) return i + 1;
    }
    ++i;
  }
  return kNpos;
}

// Scans one JSON value from buf_[i]; returns the index just past it, or kNpos when the
// buffer ends first (state kept in st, so scanning resumes where it stopped).
// Inside brackets it works on 64-byte blocks: bit masks of quotes and brackets, strings
// found by a prefix XOR of the quote mask (blocks with a backslash go byte by byte).
size_t JsonEventStream::scan(size_t i, ScanState& st, int base_depth) {
  const char* b = buf_.get();
  if (!st.started) {
    st.started = true;
    char c = b[i];
    if (c == '"') {
      st.in_string = true;
      ++i;
    } else if (c == '{' || c == '[') {
      open_bracket(i, c, st, base_depth);
      ++i;
    } else {
      st.primitive = true;
    }
  }
  if (st.primitive) {
    while (i < end_) {
      char c = b[i];
      if (c == ',' || c == '}' || c == ']' || is_ws(c)) return i;
      ++i;
    }
    return kNpos;
  }
  while (i < end_) {
    size_t n = std::min<size_t>(64, end_ - i);
#if defined(__SSE2__)
    if (st.depth > 0 && !st.escape) {
      // reads up to 63 bytes past end_: inside the padding
      const char* p = b + i;
      uint64_t valid = n == 64 ? ~0ull : (1ull << n) - 1;
      uint64_t bs = byte_mask(p, [](__m128i v) { return _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')); }) & valid;
      if (bs == 0) {
        uint64_t quote = byte_mask(p, [](__m128i v) { return _mm_cmpeq_epi8(v, _mm_set1_epi8('"')); }) & valid;
        uint64_t brackets = byte_mask(p, [](__m128i v) {
                              __m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));  // '[' -> '{', ']' -> '}'
                              return _mm_or_si128(_mm_cmpeq_epi8(low, _mm_set1_epi8('{')),
                                                  _mm_cmpeq_epi8(low, _mm_set1_epi8('}')));
                            }) & valid;
        uint64_t in_string = prefix_xor(quote);
        if (st.in_string) in_string = ~in_string;
        uint64_t structural = brackets & ~in_string;
        while (structural) {
          unsigned pos = unsigned(__builtin_ctzll(structural));
          structural &= structural - 1;
          char c = p[pos];
          if (c == '{' || c == '[') {
            open_bracket(i + pos, c, st, base_depth);
          } else {
            close_bracket(i + pos, c, st);
            if (st.depth == 0) {
              st.in_string = false;
              return i + pos + 1;
            }
          }
        }
        st.in_string = (in_string >> (n - 1)) & 1u;
        i += n;
        continue;
      }
    }
#endif
    size_t limit = st.depth == 0 ? end_ : i + n;
    size_t r = scan_bytes(i, limit, st, base_depth);
    if (r != kNpos) return r;
    i = limit;
  }
  return kNpos;
}

void JsonEventStream::expect_only_whitespace_left() {
  int c = skip_ws();
  if (c >= 0)
    fail_here(fmt::format("unexpected {} after the end of the JSON value", describe_byte(c)));
}

// The input ended inside the event list. Accepted silently for the array form between
// events (the Trace Event Format allows a missing ']'), accepted with a record when the
// caller allows truncation, an error otherwise.
bool JsonEventStream::end_of_events_input() {
  uint64_t end = base_ + end_;
  state_ = State::Done;
  if (form_ == Form::Array) return true;  // the closing ']' may be missing
  if (allow_truncated_) {
    trunc_.happened = true;
    trunc_.end_offset = end;
    return true;
  }
  fail(end, fmt::format("input ends inside traceEvents at byte {}: file truncated?", end));
}

void JsonEventStream::fail_if_lines_follow(size_t start, uint64_t index, uint64_t ev) {
  const char* b = buf_.get();
  const void* nl = std::memchr(b + start, '\n', end_ - start);
  if (!nl) return;
  size_t line_end = static_cast<const char*>(nl) - b;
  for (size_t i = line_end; i < end_; ++i) {
    char c = b[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    fail(base_ + line_end, fmt::format("event #{} (which starts at byte {}) is cut off or corrupt at the end of "
                                       "its line, and more lines follow (from byte {}): a damaged capture, not "
                                       "one a killed run left (only the last line may be cut off)",
                                       index, ev, base_ + line_end + 1));
  }
}

bool JsonEventStream::read_event(Item& out) {
  size_t start = pos_;
  ScanState st;
  size_t i = start;
  for (;;) {
    size_t r = scan(i, st, form_ == Form::Object ? 2 : 1);
    if ((r != kNpos ? r : end_) - start > kMaxEventBytes)
      fail(base_ + start, fmt::format("event #{} is larger than {} MiB: not a trace event", event_index_,
                                      kMaxEventBytes >> 20));
    if (r != kNpos) {
      out.kind = Item::Kind::Event;
      out.data = buf_.get() + start;
      out.len = r - start;
      out.offset = base_ + start;
      out.index = event_index_++;
      out.key = {};
      pos_ = r;
      state_ = State::EventsAfterEvent;
      return true;
    }
    size_t scanned = end_ - start;
    pos_ = start;
    if (!fill(start)) {
      uint64_t ev = base_ + pos_, end = base_ + end_;
      state_ = State::Done;
      if (event_per_line_) fail_if_lines_follow(pos_, event_index_, ev);
      if (allow_truncated_) {
        trunc_ = {true, true, ev, end};
        return false;
      }
      if (form_ == Form::Object)
        fail(end, fmt::format("input ends inside traceEvents at byte {} (in event #{}, which starts at byte {}): "
                              "file truncated?", end, event_index_, ev));
      fail(end, fmt::format("input ends inside event #{} (which starts at byte {}) at byte {}: file truncated?",
                            event_index_, ev, end));
    }
    start = pos_;
    i = start + scanned;
  }
}

void JsonEventStream::read_key(std::string& key) {
  // at '"'
  size_t start = pos_;
  ScanState st;
  size_t i = start;
  for (;;) {
    size_t r = scan(i, st, 1);
    if (r != kNpos) {
      key.assign(buf_.get() + start + 1, r - start - 2);
      pos_ = r;
      return;
    }
    if (end_ - start > kMaxKeptValueBytes) fail(base_ + start, "top-level key longer than 1 MiB");
    size_t scanned = end_ - start;
    pos_ = start;
    if (!fill(start)) {
      uint64_t end = base_ + end_;
      fail(end, fmt::format("input ends inside the top-level object at byte {}: file truncated?", end));
    }
    start = pos_;
    i = start + scanned;
  }
}

// In the top-level object, at the first byte of a key. Returns true with a TopLevelValue
// item for a wanted small value; false after entering traceEvents or skipping a value.
bool JsonEventStream::read_top_key_value(Item& out) {
  read_key(key_);
  int c = skip_ws();
  if (c != ':') fail_here(fmt::format("expected ':' after top-level key \"{}\", found {}", key_, describe_byte(c)));
  ++pos_;
  c = skip_ws();
  if (c < 0) {
    uint64_t end = base_ + end_;
    fail(end, fmt::format("input ends inside the top-level object at byte {}: file truncated?", end));
  }
  if (key_ == "traceEvents") {
    if (c != '[') {
      const char* what = what_starts_with(c);
      fail_here(fmt::format("\"traceEvents\" is not an array (found {})", what ? what : describe_byte(c)));
    }
    ++pos_;
    in_trace_events_ = true;
    saw_trace_events_ = true;
    state_ = State::Events;
    return false;
  }
  if (!what_starts_with(c)) fail_here(fmt::format("not JSON: unexpected {} as the value of \"{}\"", describe_byte(c), key_));
  bool keep = wants_key_ && wants_key_(key_);
  size_t start = pos_;
  ScanState st;
  size_t i = start;
  for (;;) {
    size_t r = scan(i, st, 1);
    if (r != kNpos) {
      pos_ = r;
      state_ = State::ObjectAfterValue;
      if (!keep) return false;
      out.kind = Item::Kind::TopLevelValue;
      out.data = buf_.get() + start;
      out.len = r - start;
      out.offset = base_ + start;
      out.index = 0;
      out.key = key_;
      return true;
    }
    if (keep && end_ - start > kMaxKeptValueBytes) keep = false;
    size_t scanned = end_ - start;
    // A skipped value is not kept across chunks: only the scan state survives.
    size_t keep_from = keep ? start : end_;
    pos_ = keep_from;
    if (!fill(keep_from)) {
      uint64_t end = base_ + end_;
      fail(end, fmt::format("input ends inside the top-level object at byte {}: file truncated?", end));
    }
    if (keep) {
      start = pos_;
      i = start + scanned;
    } else {
      start = pos_;
      i = pos_;
    }
  }
}

bool JsonEventStream::next(Item& out) {
  for (;;) {
    switch (state_) {
      case State::Start: {
        int c = skip_ws();
        if (c == 0xEF) {
          // The first read may hold fewer than 3 bytes (the gzip sniffing peeks 2): fill first.
          while (end_ - pos_ < 3 && fill(pos_)) {
          }
          if (end_ - pos_ >= 3 && buf_[pos_ + 1] == '\xBB' && buf_[pos_ + 2] == '\xBF') {
            pos_ += 3;  // UTF-8 byte order mark
            c = skip_ws();
          }
        }
        if (c < 0) {
          uint64_t end = base_ + end_;
          fail(end, end == 0 ? "empty file" : "file contains only whitespace, no JSON");
        }
        if (c == '{') {
          form_ = Form::Object;
          state_ = State::ObjectKey;
          ++pos_;
          c = skip_ws();
          if (c == '}') fail_here("the top-level object has no \"traceEvents\" array");
          continue;
        }
        if (c == '[') {
          form_ = Form::Array;
          state_ = State::Events;
          in_trace_events_ = true;
          ++pos_;
          continue;
        }
        if (const char* what = what_starts_with(c))
          fail_here(fmt::format("top level is {}: expected an object with \"traceEvents\" or an array of events", what));
        fail_here(fmt::format("not JSON: the input starts with {}", describe_byte(c)));
      }
      case State::ObjectKey: {
        int c = skip_ws();
        if (c < 0) {
          uint64_t end = base_ + end_;
          fail(end, fmt::format("input ends inside the top-level object at byte {}: file truncated?", end));
        }
        if (c != '"') fail_here(fmt::format("expected a key in the top-level object, found {}", describe_byte(c)));
        if (read_top_key_value(out)) return true;
        continue;
      }
      case State::ObjectAfterValue: {
        int c = skip_ws();
        if (c == ',') {
          ++pos_;
          state_ = State::ObjectKey;
          continue;
        }
        if (c == '}') {
          ++pos_;
          if (!saw_trace_events_) fail(base_ + pos_ - 1, "the top-level object has no \"traceEvents\" array");
          state_ = State::Done;
          expect_only_whitespace_left();
          return false;
        }
        if (c < 0) {
          uint64_t end = base_ + end_;
          if (allow_truncated_ && saw_trace_events_) {
            trunc_.happened = true;
            trunc_.end_offset = end;
            state_ = State::Done;
            return false;
          }
          fail(end, fmt::format("input ends inside the top-level object at byte {}: file truncated?", end));
        }
        fail_here(fmt::format("expected ',' or '}}' in the top-level object, found {}", describe_byte(c)));
      }
      case State::Events: {
        int c = skip_ws();
        if (c == '{') return read_event(out);
        if (c == ']' ) {
          ++pos_;
          in_trace_events_ = false;
          if (form_ == Form::Array) {
            state_ = State::Done;
            expect_only_whitespace_left();
            return false;
          }
          state_ = State::ObjectAfterValue;
          continue;
        }
        if (c < 0) {
          end_of_events_input();
          return false;
        }
        const char* what = what_starts_with(c);
        if (!what) fail_here(fmt::format("not JSON: unexpected {} where event #{} should start", describe_byte(c), event_index_));
        fail_here(fmt::format("event #{} is not an object (found {})", event_index_, what));
      }
      case State::EventsAfterEvent: {
        int c = skip_ws();
        if (c == ',') {
          ++pos_;
          state_ = State::Events;  // a trailing comma before ']' is tolerated
          continue;
        }
        if (c == ']') {
          state_ = State::Events;
          continue;
        }
        if (c < 0) {
          end_of_events_input();
          return false;
        }
        fail_here(fmt::format("expected ',' or ']' after event #{}, found {}", event_index_ - 1, describe_byte(c)));
      }
      case State::Done:
        return false;
    }
  }
}

}  // namespace npud
