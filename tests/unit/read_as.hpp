// Traces built by hand in tests, marked as their reader marks what it reads: the input format
// and what that source records (Trace::caps, the readers' own constants in
// ingest/reader_caps.hpp). test_reader_caps.cpp checks the readers.
#pragma once

#include "ingest/reader_caps.hpp"
#include "model/trace.hpp"

namespace npud::test {

inline void read_as_kineto(Trace& t) {
  t.format = InputFormat::KinetoJson;
  t.caps = kKinetoCaps;
}

inline void read_as_capture(Trace& t) {
  t.format = InputFormat::Capture;
  t.caps = kCaptureCaps;
}

inline void read_as_ascend_csv(Trace& t) {
  t.format = InputFormat::AscendCsv;
  t.caps = ascend_caps(false);
}

}  // namespace npud::test
