// AnalysisContext's shared derived data (declared in rules/rule.hpp).
#include <memory>
#include <optional>

#include "analysis/trace_index.hpp"
#include "graph/dataflow.hpp"
#include "rules/rule.hpp"

namespace npud {

struct DerivedData {
  std::optional<TraceIndex> index;
  std::optional<graph::DataflowGraph> dataflow;
};

namespace {
DerivedData& derived_of(const AnalysisContext& ctx) {
  if (!ctx.derived) ctx.derived = std::make_shared<DerivedData>();
  return *ctx.derived;
}
}  // namespace

const TraceIndex& AnalysisContext::index() const {
  auto& d = derived_of(*this);
  if (!d.index) d.index.emplace(trace);
  return *d.index;
}

const graph::DataflowGraph& AnalysisContext::dataflow() const {
  auto& d = derived_of(*this);
  if (!d.dataflow) d.dataflow.emplace(trace);
  return *d.dataflow;
}

}  // namespace npud
