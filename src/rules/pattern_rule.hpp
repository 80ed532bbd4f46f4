// A trace rule that reports one fused-op pattern (the FUSE00x rule files are one line each).
#pragma once

#include "graph/patterns.hpp"
#include "rules/rule.hpp"

namespace npud::graph {

// FUSE00x: one finding per (pattern, user file:line of the anchor). rules/pattern_rule.cpp.
void report_pattern(const AnalysisContext& ctx, const PatternSpec& spec, std::vector<Finding>& out);

class PatternRule final : public Rule {
 public:
  // Its findings are info: a fused op is a speed-up to take, not a fault.
  PatternRule(const PatternSpec& spec, std::string_view summary)
      : spec_(spec), info_{spec.rule, spec.name, summary, Severity::Info} {}
  const RuleInfo& info() const override { return info_; }
  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    report_pattern(ctx, spec_, out);
  }

 private:
  const PatternSpec& spec_;
  RuleInfo info_;
};

}  // namespace npud::graph
