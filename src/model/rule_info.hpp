// What every rule is, trace and scan rules alike: one table row per rule that `npu-doctor
// rules`, --select/--ignore, SARIF's rule list and the docs checks read, never the rule's code.
// A trace rule returns its RuleInfo (rules/rule.hpp); the scan's rules are a table of them
// (source/source_rules.cpp). tools/new_rule.py writes a new rule with its row.
#pragma once

#include <string_view>

#include "model/finding.hpp"

namespace npud {

struct RuleInfo {
  std::string_view id;        // stable: "SYNC001", "CUDA002"
  std::string_view name;      // "host-device-sync"; "" for scan rules (they go by id)
  std::string_view summary;   // one line for `npu-doctor rules` and SARIF's rule list
  Severity severity = Severity::Warning;   // what its findings have unless one says otherwise
  bool fixable = false;       // `scan --fix` has an exact edit for some of its findings
};

}  // namespace npud
