// AMP006 amp-banned-op: an op that torch_npu's autocast bans (binary_cross_entropy: nn.BCELoss,
// F.binary_cross_entropy) called inside the program's own autocast region. On the NPU the call
// raises instead of running. See docs/rules/AMP006.md.
#include <fmt/format.h>

#include <unordered_map>

#include "analysis/amp.hpp"
#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "knowledge/knowledge.hpp"
#include "rules/amp_rules.hpp"
#include "rules/amp_support.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

class BannedOpRule final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"AMP006", "amp-banned-op",
        "an op torch_npu's autocast bans (nn.BCELoss) called under autocast: it raises on the NPU (amp-check captures)",
        Severity::Error};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (!t.has_amp()) return;
    struct Seen {
      uint32_t first_op;
      size_t calls = 0;
    };
    std::unordered_map<StrId, Seen> by_name;
    std::vector<StrId> order;
    for (const OpNumeric& n : t.numerics) {
      if (!n.in_autocast || n.op >= t.ops.size() || in_backward(t, n.op)) continue;
      StrId name = t.ops[n.op].name;
      auto [it, fresh] = by_name.try_emplace(name, Seen{n.op});
      if (fresh) {
        std::string_view op = t.str(name);
        std::string base = "aten::" + std::string(aten_base(op));
        if (ctx.npu.autocast_policy(op) != "banned" && ctx.npu.autocast_policy(base) != "banned") {
          it->second.calls = SIZE_MAX;  // not banned: remembered so the lookup runs once
          continue;
        }
        order.push_back(name);
      }
      if (it->second.calls != SIZE_MAX) ++it->second.calls;
    }
    for (StrId name : order) {
      const Seen& s = by_name[name];
      Finding f;
      f.rule = "AMP006";
      f.severity = Severity::Error;
      f.location = location_of(ctx.index(), s.first_op);
      std::string_view base = aten_base(t.str(name));
      f.message = fmt::format("{} runs inside autocast, where torch_npu {} bans it: on the NPU the call raises "
                              "(\"{} is unsafe to autocast\") instead of running ({} call{} recorded)",
                              t.str(name), ctx.npu.version, base, s.calls, s.calls == 1 ? "" : "s");
      f.metrics = {{"calls", double(s.calls)}};
      f.fix = advice("AMP006", base == "binary_cross_entropy" ? "fix_bce" : "fix");
      f.notes.push_back(advice("AMP006", "autocast_list_note", {{"list", ctx.npu.describe()}}));
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& amp006_rule() {
  static const BannedOpRule rule;
  return rule;
}

}  // namespace npud
