// FUSE003 rotary: see graph/patterns/ and docs/rules/FUSE003.md.
#include "rules/pattern_rule.hpp"
#include "rules/builtin_rules.hpp"

namespace npud {

const Rule& fuse003_rule() {
  static const graph::PatternRule rule(graph::rotary_pattern(), "rotary embedding written out (captures): use torch_npu.npu_rotary_mul");
  return rule;
}

}  // namespace npud
