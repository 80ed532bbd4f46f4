// DYNSHAPE002 all-ops-dynamic: every device op of the profile ran as a dynamic-shape op
// (kernel_details.csv `OP State`), the advisor's "Operator Dynamic Shape Issues". Judged only
// when the column is there: without it nothing says an op is static. See docs/rules/DYNSHAPE002.md.
#include <fmt/format.h>

#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "model/trace.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/kernel_shapes.hpp"

namespace npud {
namespace {

class AllOpsDynamic final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"DYNSHAPE002", "all-ops-dynamic",
        "every device op ran as a dynamic-shape op (kernel_details OP State; only when the column exists)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    size_t dynamic = 0, stated = 0;
    int64_t dynamic_ns = 0;
    for (const Kernel& k : t.kernels) {
      const KernelDetail* d = detail_of(t, k);
      if (!d || d->op_state == 0) continue;   // no OP State column (or N/A): says nothing
      ++stated;
      std::string_view state = t.str(d->op_state);
      if (state == "static") return;          // one static op: the advisor's condition fails
      if (state == "dynamic") ++dynamic, dynamic_ns += k.dur_ns;
    }
    if (dynamic == 0) return;
    Finding f;
    f.rule = std::string(id());
    f.severity = Severity::Warning;
    f.metrics = {{"count", double(dynamic)}, {"stated", double(stated)}, {"time_ns", double(dynamic_ns)}};
    f.message = fmt::format("all {} device ops with an OP State ran as dynamic-shape ops ({} of device time): each new "
                            "shape is compiled and tiled at run time",
                            dynamic, format_duration(dynamic_ns));
    f.fix = advice("DYNSHAPE002", "fix");
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& dynshape002_rule() {
  static const AllOpsDynamic rule;
  return rule;
}

}  // namespace npud
