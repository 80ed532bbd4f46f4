// Splits a Chrome Trace Event JSON stream into its events without parsing them.
//
// The top level is either an object {"traceEvents": [...], other keys...} or a bare array
// [ {...}, ... ]. A string/escape-aware bracket scanner finds where each event ends; the
// event's bytes stay in the chunk buffer (followed by kPadding readable bytes, as simdjson
// wants) until the next call. An event that straddles two chunks is carried over to the
// front of the buffer. Nothing bigger than one event (or one small top-level value) is
// ever held, so memory does not grow with the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "ingest/byte_source.hpp"
#include "ingest/limits.hpp"

namespace npud {

class JsonEventStream {
 public:
  static constexpr size_t kPadding = 64;                 // >= SIMDJSON_PADDING
  // ingest/limits.hpp: a single event larger than this is not a trace; larger top-level
  // values are skipped unread; nesting (one bit per level in ScanState::kinds).
  static constexpr size_t kMaxEventBytes = limits::kMaxEventBytes;
  static constexpr size_t kMaxKeptValueBytes = limits::kMaxTopLevelValueBytes;
  static constexpr int kMaxDepth = limits::kMaxJsonDepth;
  static_assert(kMaxDepth <= 64);

  enum class Form { Unknown, Object, Array };

  struct Item {
    enum class Kind { Event, TopLevelValue } kind = Kind::Event;
    const char* data = nullptr;  // the value's bytes; data[len .. len+kPadding) are readable
    size_t len = 0;
    uint64_t offset = 0;         // in the (decompressed) stream
    uint64_t index = 0;          // event number, from 0
    std::string_view key;        // TopLevelValue: the key (raw, as in the file)
  };

  // The input ended inside the event list and the caller allowed it (set_allow_truncated).
  struct Truncation {
    bool happened = false;
    bool inside_event = false;   // a partial event was dropped (else the list was just not closed)
    uint64_t event_offset = 0;   // where the dropped event starts
    uint64_t end_offset = 0;     // where the input ended
  };

  // wants_key decides which top-level keys (other than traceEvents) are returned as
  // TopLevelValue items when they are small; all others are skipped without being kept.
  JsonEventStream(ByteSource& src, std::string name, std::function<bool(std::string_view)> wants_key,
                  size_t chunk_bytes = 16u << 20);
  ~JsonEventStream();

  // Returns false at the end of the input. Throws InputError for malformed input.
  bool next(Item& out);

  void set_allow_truncated(bool v) { allow_truncated_ = v; }
  // Each event on a line of its own (npu-doctor captures): only the last line may be cut off;
  // an event that does not end on its line with more lines after it is corrupt, an error.
  void set_event_per_line(bool v) { event_per_line_ = v; }
  void set_on_chunk(std::function<void()> f) { on_chunk_ = std::move(f); }
  Form form() const { return form_; }
  const Truncation& truncation() const { return trunc_; }
  uint64_t bytes_read() const { return base_ + end_; }
  const std::string& name() const { return name_; }

 private:
  struct ScanState {
    uint64_t kinds = 0;      // bit per open bracket: 1 = object, 0 = array
    int depth = 0;
    bool started = false;
    bool in_string = false;
    bool escape = false;
    bool primitive = false;
  };
  static constexpr size_t kNpos = ~size_t(0);

  bool fill(size_t keep_from);
  int skip_ws();
  size_t scan(size_t i, ScanState& st, int base_depth);
  size_t scan_bytes(size_t i, size_t limit, ScanState& st, int base_depth);
  void open_bracket(size_t at, char c, ScanState& st, int base_depth);
  void close_bracket(size_t at, char c, ScanState& st);
  [[noreturn]] void fail(uint64_t offset, const std::string& msg) const;
  [[noreturn]] void fail_here(const std::string& msg) const { fail(base_ + pos_, msg); }
  std::string describe_byte(int c) const;
  bool read_event(Item& out);
  void fail_if_lines_follow(size_t start, uint64_t index, uint64_t event_offset);
  bool read_top_key_value(Item& out);
  void read_key(std::string& key);
  bool end_of_events_input();   // EOF inside the event list: true = accepted
  void expect_only_whitespace_left();

  ByteSource& src_;
  std::string name_;
  std::function<bool(std::string_view)> wants_key_;
  std::function<void()> on_chunk_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;     // usable bytes (padding excluded)
  size_t chunk_ = 0;
  size_t pos_ = 0;     // next unread byte
  size_t end_ = 0;     // end of data in buf_
  uint64_t base_ = 0;  // stream offset of buf_[0]
  bool eof_ = false;

  enum class State { Start, ObjectKey, ObjectAfterValue, Events, EventsAfterEvent, Done };
  State state_ = State::Start;
  Form form_ = Form::Unknown;
  bool in_trace_events_ = false;
  bool saw_trace_events_ = false;
  bool allow_truncated_ = false;
  bool event_per_line_ = false;
  uint64_t event_index_ = 0;
  std::string key_;
  Truncation trunc_;
};

}  // namespace npud
