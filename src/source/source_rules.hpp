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
#include "model/rule_info.hpp"

namespace npud {

// Each scan rule's row (model/rule_info.hpp); a rule may lower the severity per finding.
std::span<const RuleInfo> source_rules();
const RuleInfo* find_source_rule(std::string_view id);
// The rules as --select/--ignore know them (no names: scan's rules go by id).
std::vector<RuleRef> source_rule_refs();


}  // namespace npud
