// A trace rule that reports one fused-op pattern (the FUSE00x rule files are one line each).
#pragma once

#include "graph/patterns.hpp"
#include "rules/rule.hpp"

namespace npud::graph {

// FUSE00x: one finding per (pattern, user file:line of the anchor). rules/pattern_rule.cpp.
void report_pattern(const AnalysisContext& ctx, const PatternSpec& spec, std::vector<Finding>& out);

class PatternRule final : public Rule {
 public:
  PatternRule(const PatternSpec& spec, std::string_view summary) : spec_(spec), summary_(summary) {}
  std::string_view id() const override { return spec_.rule; }
  std::string_view name() const override { return spec_.name; }
  std::string_view summary() const override { return summary_; }
  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    report_pattern(ctx, spec_, out);
  }

 private:
  const PatternSpec& spec_;
  std::string_view summary_;
};

}  // namespace npud::graph
