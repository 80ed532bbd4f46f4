// A rule: one small unit with a stable id, a default severity and a doc under
// docs/rules/<ID>.md. It reads the shared Trace (never raw formats) and appends Findings.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "model/finding.hpp"
#include "model/rule_filter.hpp"
#include "model/rule_info.hpp"

namespace npud {

class Trace;
class Knowledge;
struct KnowledgeVersion;

struct RuleOptions {
  size_t top_n = 10;              // how many hot ops to list
  double min_gap_us = 50;         // device idle gaps shorter than this are ignored
  // min_gap_us in ns, at least 1: IDLE001's threshold, and the HTML timeline's idle gaps.
  int64_t min_gap_ns() const { return std::max<int64_t>(1, int64_t(std::llround(min_gap_us * 1000.0))); }
};

class TraceIndex;
namespace graph {
class DataflowGraph;
}
struct DerivedData;

struct AnalysisContext {
  const Trace& trace;
  const KnowledgeVersion& npu;    // the chosen torch_npu version's facts
  RuleOptions options;

  // Derived structures several rules need, built once on first use and shared by every rule
  // of one analysis (on a trace of millions of events each costs a pass over all of them).
  // Not thread-safe: rules run one after another.
  const TraceIndex& index() const;
  const graph::DataflowGraph& dataflow() const;

  // Filled on first use by index()/dataflow(); copies of a context share it.
  mutable std::shared_ptr<DerivedData> derived = {};
};

class Rule {
 public:
  virtual ~Rule() = default;
  // Its row: id, name, summary, default severity (model/rule_info.hpp).
  virtual const RuleInfo& info() const = 0;
  std::string_view id() const { return info().id; }            // "SYNC001"
  std::string_view name() const { return info().name; }        // "host-device-sync"
  std::string_view summary() const { return info().summary; }  // one line for `npu-doctor rules`
  virtual void check(const AnalysisContext& ctx, std::vector<Finding>& out) const = 0;
  // Its findings rank measured times (HOT001's top ops): which ones make the list changes from
  // run to run of an unchanged program, so a baseline holds how many, not which
  // (pipeline/baseline.hpp).
  virtual bool ranks_timings() const { return false; }
};

// Every trace rule, in id order. Defined in rules/registry.cpp.
const std::vector<const Rule*>& trace_rules();
// trace_rules() as --select/--ignore know them: id and name (model/rule_filter.hpp).
std::vector<RuleRef> trace_rule_refs();

// Runs the selected rules and sorts findings: severity, then estimated cost, worst first.
std::vector<Finding> run_rules(const AnalysisContext& ctx, const std::vector<const Rule*>& rules);

}  // namespace npud
