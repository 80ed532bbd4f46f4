// FUSE001 rms_norm: see graph/patterns/ and docs/rules/FUSE001.md.
#include "rules/pattern_rule.hpp"
#include "rules/builtin_rules.hpp"

namespace npud {

const Rule& fuse001_rule() {
  static const graph::PatternRule rule(graph::rms_norm_pattern(), "hand-written RMSNorm (captures): use torch_npu.npu_rms_norm");
  return rule;
}

}  // namespace npud
