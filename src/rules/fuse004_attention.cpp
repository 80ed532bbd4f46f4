// FUSE004 attention: see graph/patterns/ and docs/rules/FUSE004.md.
#include "rules/pattern_rule.hpp"
#include "rules/builtin_rules.hpp"

namespace npud {

const Rule& fuse004_rule() {
  static const graph::PatternRule rule(graph::attention_pattern(), "attention written out (captures): use npu_fusion_attention / SDPA");
  return rule;
}

}  // namespace npud
