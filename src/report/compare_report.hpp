// The reports of `npu-doctor compare`: the matched pairs' metrics (docs/metrics.md), the first
// divergence with its module/op and file:line, unmatched entries (docs/compare.md).
#pragma once

#include <ostream>
#include <string>

#include "numeric/compare.hpp"

namespace npud {

struct CompareRenderOptions {
  bool all = false;          // --all: every pair, not only the diverging ones
  std::string mapping;       // --mapping FILE, "" none (the report says which renames it applied)
  Thresholds thresholds;
};

void render_compare_text(std::ostream& os, const Dump& ref, const Dump& target, const CompareResult& res,
                         const CompareRenderOptions& o);
void render_compare_json(std::ostream& os, const Dump& ref, const Dump& target, const CompareResult& res,
                         const CompareRenderOptions& o);

}  // namespace npud
