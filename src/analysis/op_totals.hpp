// Time and calls per name: host aten ops by self time, device tasks by duration. The HTML
// report's op breakdown and `diff`'s op tables both count them here, so their totals agree.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>

#include "model/trace.hpp"

namespace npud {

using OpTotals = std::unordered_map<std::string, std::pair<int64_t, int64_t>>;  // name -> (time ns, calls)

// Aten ops (OpKind::Aten) by name: summed self time (saturating) and calls.
OpTotals host_op_totals(const Trace& t);
// Busy device tasks (is_busy_task) by name: summed duration (saturating) and count.
OpTotals device_task_totals(const Trace& t);
// Sum of the times of `totals` (saturating).
int64_t total_time(const OpTotals& totals);

}  // namespace npud
