// FUSE007 optimizer-loop: per-parameter optimizer loops (see graph/optimizer_loop.hpp and
// docs/rules/FUSE007.md).
#include "graph/affinity.hpp"
#include "rules/builtin_rules.hpp"

namespace npud {
namespace {

class OptimizerLoop final : public Rule {
 public:
  std::string_view id() const override { return "FUSE007"; }
  std::string_view name() const override { return "optimizer-loop"; }
  std::string_view summary() const override {
    return "per-parameter optimizer loops (captures): use foreach/fused optimizers";
  }
  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    graph::report_optimizer_loops(ctx, out);
  }
};

}  // namespace

const Rule& fuse007_rule() {
  static const OptimizerLoop rule;
  return rule;
}

}  // namespace npud
