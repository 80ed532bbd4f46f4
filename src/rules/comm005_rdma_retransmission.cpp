// COMM005 rdma-retransmission: a collective that took over 4 s on every rank, and whose RDMA
// transfer alone took over 4 s on some rank: the signature of RDMA packet retransmission
// (a rank that merely arrived late makes the others wait, not all of them). msprof-analyze's
// "Communication Retransmission Analysis" (advisor/analyzer/cluster/
// communication_retransmission_checker.py). Needs the ranks' records (cluster view).
// docs/rules/COMM005.md.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/comm_support.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

class RdmaRetransmission final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"COMM005", "rdma-retransmission",
        "collectives whose RDMA transfer took over 4 s while every rank took over 4 s (retransmission)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    // (group, op, step) -> the ranks' records
    std::map<std::tuple<StrId, StrId, int64_t>, std::vector<const CommOp*>> calls;
    for (const CommOp& op : t.comm_ops)
      if (op.rank >= 0) calls[{op.group, op.name, op.step_number}].push_back(&op);
    std::set<StrId> groups;
    std::vector<const CommOp*> slow;
    for (const auto& [key, ops] : calls) {
      double min_elapse = ops.front()->elapse_ms, max_rdma = 0;
      for (const CommOp* op : ops) {
        min_elapse = std::min(min_elapse, op->elapse_ms);
        if (const CommTransport* tr = t.transport(*op, "RDMA")) max_rdma = std::max(max_rdma, tr->time_ms);
      }
      if (min_elapse < kRetransmissionMs || max_rdma <= kRetransmissionMs) continue;
      groups.insert(std::get<0>(key));
      for (const CommOp* op : ops) {
        const CommTransport* tr = t.transport(*op, "RDMA");
        if (tr && tr->size_mb > 0 && tr->time_ms > kRetransmissionMs) slow.push_back(op);
      }
    }
    if (groups.empty()) return;
    double rdma_ms = 0;
    for (const CommOp* op : slow) rdma_ms += t.transport(*op, "RDMA")->time_ms;

    Finding f;
    f.rule = "COMM005";
    f.severity = Severity::Warning;
    f.message = fmt::format("RDMA retransmission suspected in {} communication group{}: {} rank transfer{} over {:g} s",
                            groups.size(), groups.size() == 1 ? "" : "s", slow.size(), slow.size() == 1 ? "" : "s",
                            kRetransmissionMs / 1000);
    if (!slow.empty()) f.location.op = std::string(t.str(slow.front()->name));
    f.metrics = {{"group_count", double(groups.size())}, {"transfer_count", double(slow.size())}, {"rdma_ms", rdma_ms}};
    f.cost_ns = ms_to_ns(rdma_ms);
    for (const CommOp* op : slow) {
      const CommTransport* tr = t.transport(*op, "RDMA");
      f.notes.push_back(advice("COMM005", "transfer_note",
                               {{"group", t.str(op->group)},
                                {"op", t.str(op->name)},
                                {"step", op->step_number >= 0 ? advice("COMM", "step_suffix", {{"step", op->step_number}}) : ""},
                                {"rank", op->rank},
                                {"mb", fmt::format("{:.4f}", tr->size_mb)},
                                {"ms", fmt::format("{:.4f}", tr->time_ms)},
                                {"gbs", gbs_text(tr->bandwidth_gbs)}}));
    }
    f.fix = advice("COMM005", "fix");
    out.push_back(std::move(f));
  }
};

}  // namespace


const Rule& comm005_rule() {
  static const RdmaRetransmission rule;
  return rule;
}

}  // namespace npud
