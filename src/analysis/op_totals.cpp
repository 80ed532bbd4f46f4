#include "analysis/op_totals.hpp"

#include "analysis/trace_index.hpp"
#include "util/saturate.hpp"

namespace npud {

OpTotals host_op_totals(const Trace& t) {
  OpTotals out;
  for (const Op& op : t.ops) {
    if (op.kind != OpKind::Aten) continue;
    auto& e = out[std::string(t.str(op.name))];
    add_saturating(e.first, op.self_ns);
    e.second += 1;
  }
  return out;
}

OpTotals device_task_totals(const Trace& t) {
  OpTotals out;
  for (const Kernel& k : t.kernels) {
    if (!is_busy_task(k)) continue;
    auto& e = out[std::string(t.str(k.name))];
    add_saturating(e.first, k.dur_ns);
    e.second += 1;
  }
  return out;
}

int64_t total_time(const OpTotals& totals) {
  int64_t sum = 0;
  for (const auto& [name, e] : totals) add_saturating(sum, e.first);
  return sum;
}

}  // namespace npud
