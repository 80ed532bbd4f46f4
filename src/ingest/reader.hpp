// Entry point of all importers: looks at a path, picks the reader for its format,
// returns the Trace. Throws InputError for anything it cannot read.
#pragma once

#include <functional>
#include <string>

#include "ingest/limits.hpp"
#include "model/trace.hpp"

namespace npud {

struct ReadOptions {
  // Accept a cut-off last event (a killed capture). Array-form Chrome JSON may lack its
  // closing ']' per the Trace Event Format; this goes one step further.
  bool allow_truncated = false;
  // Called now and then with (bytes done, bytes total or 0 if unknown).
  std::function<void(uint64_t, uint64_t)> progress;
  // More events than this is an error at the event that passes it (0: no limit).
  uint64_t max_events = limits::kMaxEvents;
};

InputFormat detect_format(const std::string& path);
Trace read_trace(const std::string& path, const ReadOptions& opts = {});

}  // namespace npud
