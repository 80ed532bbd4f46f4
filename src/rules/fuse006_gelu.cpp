// FUSE006 gelu: see graph/patterns/ and docs/rules/FUSE006.md.
#include "rules/pattern_rule.hpp"
#include "rules/builtin_rules.hpp"

namespace npud {

const Rule& fuse006_rule() {
  static const graph::PatternRule rule(graph::gelu_pattern(), "GELU written out (captures): use F.gelu / torch_npu.npu_gelu");
  return rule;
}

}  // namespace npud
