// What the NPU profile rules about host runtime calls share (COMPILE001: aclopCompileAndExecute,
// MEM001: device memory allocation and release, LAUNCH001: stream synchronizes): the calls a
// name test selects, their count and time, and the aten ops that made them, costliest first.
// timed_finding (rule_support.hpp) turns the totals into a finding.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_support.hpp"

namespace npud {

// The selected calls as one group (count, in_steps, time_ns; location = the costliest
// linked aten op's), plus what made them.
struct RuntimeTotals : EventGroup {
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

// "aten::mul (12 calls, 3.10 ms), aten::index (4 calls, 1.20 ms)" for the first `n` ops.
std::string ops_text(const RuntimeTotals& totals, size_t n);

}  // namespace npud
