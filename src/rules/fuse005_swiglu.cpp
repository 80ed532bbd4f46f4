// FUSE005 swiglu: see graph/patterns/ and docs/rules/FUSE005.md.
#include "rules/pattern_rule.hpp"
#include "rules/builtin_rules.hpp"

namespace npud {

const Rule& fuse005_rule() {
  static const graph::PatternRule rule(graph::swiglu_pattern(), "SwiGLU written out (captures): use torch_npu.npu_swiglu");
  return rule;
}

}  // namespace npud
