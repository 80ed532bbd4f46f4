// Limits against hostile input, in one place: every reader refuses (InputError naming the
// file and byte offset) or, where noted, drops and warns once, rather than let a crafted
// file exhaust memory, recurse without end or overflow arithmetic. docs/security.md lists
// them with the reason for each value; tests/unit/test_hostile_limits.cpp checks each one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace npud::limits {

// JSON (Chrome / Kineto / capture / trace_view.json) -------------------------------------
inline constexpr int kMaxJsonDepth = 64;                    // nesting levels; error
inline constexpr size_t kMaxEventBytes = size_t(64) << 20;  // one event's JSON text; error
inline constexpr size_t kMaxTopLevelValueBytes = size_t(1) << 20;  // kept top-level values; larger ones skipped
// A name, category, stack text or other string npu-doctor keeps from an event; error.
// (Kineto call stacks and capture stacks of 1,000 frames are ~100-300 KB.)
inline constexpr size_t kMaxStringBytes = size_t(1) << 20;
// Frames kept per call stack (innermost first; Python's default recursion limit is 1,000);
// longer stacks are cut, with one warning.
inline constexpr size_t kMaxStackFrames = 1024;
// Tensor shapes: rank above this, or more than kMaxElements elements (product of the
// non-zero sizes), and the shape is dropped (the tensor is kept, shape unknown), with one
// warning. 2^59 elements x 16 bytes (complex128) still fits int64 bytes.
inline constexpr size_t kMaxRank = 255;
inline constexpr uint64_t kMaxElements = uint64_t(1) << 59;

// CSV (torch_npu kernel_details.csv, step_trace_time.csv, op_statistic.csv) ---------------
inline constexpr size_t kMaxCsvFieldBytes = size_t(1) << 20;  // one field; error
inline constexpr size_t kMaxCsvFields = 4096;                 // fields in one record; error

// Times (all readers): timestamps and durations are exact int64 nanoseconds; a value, an
// end (ts + dur) or the span between the earliest and the latest time that does not fit
// int64 (about 292 years) is an error.

// Events in one trace: each kept event costs ~150 bytes in the model, so 2^25 events is
// about 5 GB. A small .gz of repeated events inflates to billions: error at the event that
// passes the limit (ReadOptions::max_events, `--max-events`, raises it); running out of
// memory first is an error at the offset reached, not a crash.
inline constexpr uint64_t kMaxEvents = uint64_t(1) << 25;

// Python sources (scan): files over 256 MiB are skipped with a note (source/scanner.cpp);
// `scan -` stops reading stdin past it (exit 2). The limit is source/scanner.hpp's kMaxSourceBytes.

}  // namespace npud::limits
