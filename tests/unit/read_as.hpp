// Traces built by hand in tests, marked as their reader marks what it reads: the input format
// and what that source records (Trace::caps). test_reader_caps.cpp checks the readers.
#pragma once

#include "model/trace.hpp"

namespace npud::test {

inline void read_as_kineto(Trace& t) {
  t.format = InputFormat::KinetoJson;
  t.caps = TraceCaps{.runtime_calls = true};
}

inline void read_as_capture(Trace& t) {
  t.format = InputFormat::Capture;
  t.caps = TraceCaps{.dispatched_ops = true, .estimated_costs = true, .startup_step = true, .end_status = true,
                     .program_argv = true};
}

inline void read_as_ascend_csv(Trace& t) {
  t.format = InputFormat::AscendCsv;
  t.caps = TraceCaps{.npu_tasks = true};
}

}  // namespace npud::test
