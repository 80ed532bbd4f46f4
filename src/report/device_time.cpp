#include <fmt/format.h>

#include "analysis/names.hpp"
#include "report/render.hpp"

namespace npud {

std::string device_time_line(const StepBreakdown& b, size_t steps) {
  auto part = [&](int64_t ns) { return fmt::format("{} ({})", format_duration(ns), format_share(double(ns) / double(b.step_ns))); };
  std::string comm = b.communication_ns ? fmt::format(", communication {} (overlapped with computing {})",
                                                      part(b.communication_ns), format_duration(b.overlapped_ns))
                                        : "";
  // "free" is the whole step's time with no device task; IDLE001's "idle" is another measure
  // (gaps >= --min-gap-us between a device's first and last task, summed over the steps): each
  // says what it counts, so the two numbers do not read as one quantity (issue 30 §4).
  std::string free = fmt::format("{} ({}: no device task running, gaps of any length; IDLE001 counts the long gaps)",
                                 format_duration(b.free_ns), format_share(double(b.free_ns) / double(b.step_ns)));
  return fmt::format("device time per {}: computing {}{}, free {}",
                     steps ? fmt::format("step of {} (mean of {} steps)", format_duration(b.step_ns), steps) : "trace",
                     part(b.computing_ns), comm, free);
}

}  // namespace npud
