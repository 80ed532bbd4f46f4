#include "ingest/step_trace_table.hpp"

namespace npud {

StepTraceColumns::StepTraceColumns(const Table& t, const Columns& cols)
    : step_(t.required(cols, {"Step"})),
      computing_(cols.find({"Computing"})),
      not_overlapped_(cols.find({"Communication(Not Overlapped)"})),
      communication_(cols.find({"Communication"})),
      overlapped_(cols.find({"Overlapped"})),
      free_(cols.find({"Free"})),
      stage_(cols.find({"Stage"})),
      bubble_(cols.find({"Bubble"})) {}

StepTraceTime StepTraceColumns::read(const Table& t, const std::vector<std::string>& row) const {
  auto ns = [&](int col) { return col < 0 || is_na(row[size_t(col)]) ? 0 : t.time_ns(row, col, t.header()[size_t(col)]); };
  StepTraceTime s;
  s.step_number = is_na(row[size_t(step_)]) ? -1 : parse_int(row[size_t(step_)]).value_or(-1);
  s.computing_ns = ns(computing_);
  s.overlapped_ns = ns(overlapped_);
  // Communication = Communication(Not Overlapped) + Overlapped (msprof-analyze's definition).
  s.comm_not_overlapped_ns = not_overlapped_ >= 0 ? ns(not_overlapped_) : ns(communication_) - s.overlapped_ns;
  s.free_ns = ns(free_);
  if (stage_ >= 0) s.stage_ns = ns(stage_);
  if (bubble_ >= 0) s.bubble_ns = ns(bubble_);
  return s;
}

}  // namespace npud
