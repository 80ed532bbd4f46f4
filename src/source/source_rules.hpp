// The static scan's rules: ids, one-line summaries, and the filter --select/--ignore build.
// Each rule is a small unit in src/source/rule_*.cpp with a doc in docs/rules/<ID>.md and an
// input with inline expectations in tests/data/scan/.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/finding.hpp"
#include "model/rule_filter.hpp"

namespace npud {

struct SourceRuleInfo {
  std::string_view id;
  Severity severity;       // default severity (a rule may lower it per finding)
  bool fixable;            // has an exact fix for at least some findings
  std::string_view summary;
};

std::span<const SourceRuleInfo> source_rules();
const SourceRuleInfo* find_source_rule(std::string_view id);
// The rules as --select/--ignore know them (no names: scan's rules go by id).
std::vector<RuleRef> source_rule_refs();


}  // namespace npud
