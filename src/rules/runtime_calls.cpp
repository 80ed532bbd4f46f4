#include "rules/runtime_calls.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "util/saturate.hpp"

namespace npud {

RuntimeTotals total_runtime_calls(const AnalysisContext& ctx, const std::function<bool(std::string_view)>& selects) {
  const Trace& t = ctx.trace;
  const TraceIndex& index = ctx.index();
  RuntimeTotals out;
  std::unordered_map<std::string, size_t> op_slot;   // top aten op and its place -> by_op entry
  for (const RuntimeCall& call : t.runtime) {
    std::string_view name = t.str(call.name);
    if (!selects(name)) continue;
    out.add(call.step_index, call.dur_ns);
    if (std::find(out.names.begin(), out.names.end(), name) == out.names.end()) out.names.emplace_back(name);
    uint32_t top = index.top_aten(index.op_of_runtime(call));
    Location loc = location_of(index, top);
    std::string key = top == kNone ? std::string() : loc.op + "\x1f" + where(loc);
    auto [it, fresh] = op_slot.try_emplace(key, out.by_op.size());
    if (fresh) out.by_op.push_back({top == kNone ? std::string() : loc.op, loc, 0, 0});
    RuntimeTotals::ByOp& b = out.by_op[it->second];
    ++b.count;
    add_saturating(b.time_ns, call.dur_ns);
  }
  std::stable_sort(out.by_op.begin(), out.by_op.end(),
                   [](const auto& a, const auto& b) { return a.time_ns > b.time_ns; });
  for (const auto& b : out.by_op)
    if (!b.op.empty()) {
      out.location = b.location;
      break;
    }
  return out;
}

std::string ops_text(const RuntimeTotals& totals, size_t n) {
  std::string s;
  size_t shown = 0;
  for (const auto& b : totals.by_op) {
    if (b.op.empty()) continue;
    if (shown == n) {
      s += ", ...";
      break;
    }
    s += fmt::format("{}{} ({} call{}, {})", s.empty() ? "" : ", ", b.op, b.count, b.count == 1 ? "" : "s",
                     format_duration(b.time_ns));
    ++shown;
  }
  return s;
}

}  // namespace npud
