// The msprof-analyze step_trace_time breakdown of a trace's device time, per step:
// computing and communication are unions of busy intervals, overlapped their intersection,
// free the rest of the step. The analyze report shows the mean; the cluster view compares it
// across ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.hpp"

namespace npud {

struct StepBreakdown {
  int64_t number = -1;          // step number; -1: the whole trace (it has no steps)
  int64_t step_ns = 0;
  int64_t computing_ns = 0;
  int64_t communication_ns = 0;
  int64_t overlapped_ns = 0;
  int64_t free_ns = 0;
  // Communication spent waiting for other ranks, when the source measured it (msprof
  // cluster output); -1 otherwise (the cluster view then estimates it from collectives).
  int64_t comm_wait_ns = -1;
  // Pipeline stage time and bubble as step_trace_time.csv records them; -1: not recorded.
  int64_t stage_ns = -1, bubble_ns = -1;

  int64_t comm_not_overlapped_ns() const { return communication_ns - overlapped_ns; }
};

// One per step in time order (one spanning the trace when it has no steps). Device work
// outside every step is not counted.
std::vector<StepBreakdown> step_breakdowns(const Trace& t);

// A step_trace_time.csv row as a step: its step time is what the device did plus what it
// did not (computing + communication not overlapped + free), msprof-analyze's step duration.
StepBreakdown step_from_step_trace(const StepTraceTime& row);

// The mean of each field (number -1); all zero for no steps.
StepBreakdown mean_breakdown(const std::vector<StepBreakdown>& steps);

}  // namespace npud
