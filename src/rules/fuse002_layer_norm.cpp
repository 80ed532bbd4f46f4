// FUSE002 layer_norm: see graph/patterns/ and docs/rules/FUSE002.md.
#include "rules/pattern_rule.hpp"
#include "rules/builtin_rules.hpp"

namespace npud {

const Rule& fuse002_rule() {
  static const graph::PatternRule rule(graph::layer_norm_pattern(), "LayerNorm written out (captures): use F.layer_norm / nn.LayerNorm");
  return rule;
}

}  // namespace npud
