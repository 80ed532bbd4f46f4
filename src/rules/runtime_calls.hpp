// What the NPU profile rules about host runtime calls share (COMPILE001: aclopCompileAndExecute,
// MEM001: device memory allocation and release): the calls a name test selects, their count and
// time, and the aten ops that made them, the ones costing most first.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_support.hpp"

namespace npud {

// "AscendCL@aclrtMalloc" -> "aclrtMalloc"; other names unchanged.
std::string_view strip_runtime_prefix(std::string_view name);

struct RuntimeTotals {
  size_t count = 0, in_steps = 0;
  int64_t time_ns = 0;
  std::vector<std::string> names;   // distinct call names seen, first seen first
  struct ByOp {
    std::string op;                 // the top aten op that made the calls ("" = none linked)
    Location location;
    size_t count = 0;
    int64_t time_ns = 0;
  };
  std::vector<ByOp> by_op;          // most time first
};

RuntimeTotals total_runtime_calls(const AnalysisContext& ctx, const std::function<bool(std::string_view)>& selects);

// A finding of `rule` over the totals: located at the costliest linked aten op; metrics
// `count`, `per_step`, `time_ns`, `time_share` (of step time); cost_ns = the time.
Finding runtime_finding(const AnalysisContext& ctx, const RuntimeTotals& totals, std::string_view rule);

// "aten::mul (12 calls, 3.10 ms), aten::index (4 calls, 1.20 ms)" for the first `n` ops.
std::string ops_text(const RuntimeTotals& totals, size_t n);

}  // namespace npud
