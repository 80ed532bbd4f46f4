// COMM002 bandwidth-contention: SDMA collectives that ran while a matmul ran and moved data
// below 80 % of the SDMA rated bandwidth (18 GB/s): compute and communication contend for HBM.
// msprof-analyze's "Bandwidth Contention Analysis" (advisor/analyzer/communication/contention).
// docs/rules/COMM002.md.
#include <algorithm>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/comm_support.hpp"
#include "rules/rule_support.hpp"
#include "util/text.hpp"

namespace npud {
namespace {

struct SdmaOp {
  const CommOp* op;
  double bandwidth_gbs, size_mb, time_ms;
  int64_t start_ns, end_ns;
};

class BandwidthContention final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"COMM002", "bandwidth-contention",
        "SDMA collectives overlapping matmuls below 80% of the 18 GB/s SDMA bandwidth",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    std::vector<SdmaOp> sdma;
    for (const CommOp& op : t.comm_ops) {
      const CommTransport* tr = t.transport(op, "SDMA");
      if (op.rank >= 0 || op.start_ns == kUnset || !tr || tr->size_mb <= 0) continue;
      sdma.push_back({&op, tr->bandwidth_gbs, tr->size_mb, tr->time_ms, op.start_ns, op.start_ns + ms_to_ns(op.elapse_ms)});
    }
    std::vector<const Kernel*> matmul;
    for (const Kernel& k : t.kernels)
      if (icontains(t.str(k.name), "matmul")) matmul.push_back(&k);
    if (sdma.empty() || matmul.empty()) return;
    std::stable_sort(sdma.begin(), sdma.end(), [](const SdmaOp& a, const SdmaOp& b) { return a.start_ns < b.start_ns; });
    std::stable_sort(matmul.begin(), matmul.end(), [](const Kernel* a, const Kernel* b) { return a->start_ns < b->start_ns; });

    // The advisor's walk over both lists in start order (bounds inclusive).
    const double threshold = kContentionShare * kSdmaRatedGbs;
    std::vector<SdmaOp> slow;
    size_t i = 0, j = 0;
    while (i < sdma.size() && j < matmul.size()) {
      if (sdma[i].end_ns < matmul[j]->start_ns) ++i;
      else if (matmul[j]->start_ns + matmul[j]->dur_ns < sdma[i].start_ns) ++j;
      else {
        if (sdma[i].bandwidth_gbs < threshold) slow.push_back(sdma[i]);
        ++i;
      }
    }
    if (slow.empty()) return;
    // Time lost: the SDMA transfer time beyond what the rated bandwidth would take (MB / (GB/s) = ms).
    double lost_ms = 0;
    for (const SdmaOp& s : slow) lost_ms += std::max(0.0, s.time_ms - s.size_mb / kSdmaRatedGbs);
    std::stable_sort(slow.begin(), slow.end(), [](const SdmaOp& a, const SdmaOp& b) { return a.bandwidth_gbs < b.bandwidth_gbs; });

    Finding f;
    f.rule = "COMM002";
    f.severity = Severity::Warning;
    f.message = fmt::format("{} SDMA collective{} overlapping matmuls moved data below {:g} GB/s (lowest {} GB/s: {})",
                            slow.size(), slow.size() == 1 ? "" : "s", threshold, gbs_text(slow.front().bandwidth_gbs),
                            t.str(slow.front().op->name));
    f.location.op = std::string(t.str(slow.front().op->name));
    f.metrics = {{"count", double(slow.size())},
                 {"threshold_gbs", threshold},
                 {"min_bandwidth_gbs", slow.front().bandwidth_gbs},
                 {"lost_ms", lost_ms}};
    f.cost_ns = ms_to_ns(lost_ms);
    constexpr size_t kShown = 10;  // bandwidth_contention.yaml top_num
    for (size_t k = 0; k < slow.size() && k < kShown; ++k)
      f.notes.push_back(advice("COMM002", "op_note",
                               {{"op", t.str(slow[k].op->name)},
                                {"ms", fmt::format("{:.4f}", slow[k].op->elapse_ms)},
                                {"gbs", gbs_text(slow[k].bandwidth_gbs)},
                                {"mb", fmt::format("{:.4f}", slow[k].size_mb)},
                                {"step", slow[k].op->step_number >= 0 ? advice("COMM002", "step", {{"step", slow[k].op->step_number}}) : ""}}));
    f.fix = advice("COMM002", "fix");
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& comm002_rule() {
  static const BandwidthContention rule;
  return rule;
}

}  // namespace npud
