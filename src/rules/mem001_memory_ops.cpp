// MEM001 memory-op-time: host time spent allocating and freeing device memory (aclrtMalloc,
// aclMallocMemInner, aclrtFree, aclrtFreePhysical...) inside the profiled steps: the caching
// allocator ran out of blocks it could reuse. See docs/rules/MEM001.md.
#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/runtime_calls.hpp"

namespace npud {
namespace {

// Ascend's advisor flags 10 ms in total per call name, whatever the profile's length; a share
// of the step scales with it.
constexpr double kMinMemoryShare = 0.02;

bool is_memory_op(std::string_view n) {
  return n.starts_with("aclrtMalloc") || n == "aclMallocMemInner" || n.starts_with("aclrtFree") ||
         n == "aclrtMallocPhysical" || n == "aclrtFreePhysical" || n == "aclrtMapMem" || n == "aclrtUnmapMem" ||
         n == "aclrtReserveMemAddress" || n == "aclrtReleaseMemAddress";
}

class MemoryOpTime final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"MEM001", "memory-op-time",
        "host time allocating and freeing device memory in the steps (aclrtMalloc/aclrtFree; NPU profiles)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const TraceIndex& index = ctx.index();
    RuntimeTotals c = total_runtime_calls(ctx, is_memory_op);
    if (c.count == 0) return;
    double s = share(c.time_ns, index.wall_ns());
    if (s < kMinMemoryShare) return;
    Finding f = timed_finding(index, id(), c);
    f.severity = Severity::Warning;
    std::string names;
    for (const auto& n : c.names) names += (names.empty() ? "" : ", ") + n;
    std::string ops = ops_text(c, 3);
    std::string rate = per_step_note(index, c);
    f.message = fmt::format("{} device memory call{}{} ({}) took {} on the host ({} of {} time){}", c.count,
                            c.count == 1 ? "" : "s", rate, names, format_duration(c.time_ns), format_share(s),
                            index.step_count() ? "step" : "trace", ops.empty() ? "" : "; made by " + ops);
    f.fix = advice("MEM001", "fix");
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& mem001_rule() {
  static const MemoryOpTime rule;
  return rule;
}

}  // namespace npud
