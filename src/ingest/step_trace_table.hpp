// The per-step columns torch_npu's step_trace_time.csv and msprof-analyze's
// cluster_step_trace_time.csv share (Computing, Communication(Not Overlapped), Overlapped,
// Free, Stage, Bubble; microseconds), read one way for both.
#pragma once

#include <string>
#include <vector>

#include "ingest/csv_table.hpp"
#include "model/trace.hpp"

namespace npud {

class StepTraceColumns {
 public:
  StepTraceColumns(const Table& t, const Columns& cols);
  // Computing, Free and the communication not overlapped (its own column, or Communication
  // less Overlapped) are there: the rows make a step table.
  bool complete() const { return computing_ >= 0 && free_ >= 0 && (not_overlapped_ >= 0 || communication_ >= 0); }
  // One row (call only when complete()); a bad time fails with the file and byte offset.
  StepTraceTime read(const Table& t, const std::vector<std::string>& row) const;

 private:
  int step_, computing_, not_overlapped_, communication_, overlapped_, free_, stage_, bubble_;
};

}  // namespace npud
