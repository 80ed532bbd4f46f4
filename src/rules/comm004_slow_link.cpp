// COMM004 slow-link: one rank's SDMA or RDMA bandwidth (transferred MB / transfer ms over all
// its collectives of a step) far below the other ranks'. msprof-analyze's "slow link"
// (advisor/analyzer/cluster/slow_link_analyzer.py). Reads the ranks' CommOp records of
// cluster_communication.json or of each rank's communication.json (the cluster view), so a
// single rank's trace has nothing to compare. docs/rules/COMM004.md.
#include <algorithm>

#include <fmt/format.h>

#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/comm_support.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

struct RankLink {
  int64_t step_number = -1, rank = -1;   // step as recorded (-1: not numbered)
  double size_mb = 0, time_ms = 0;
  double gbs() const { return RankLinkBandwidth::gbs(size_mb, time_ms); }
};

class SlowLink final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"COMM004", "slow-link",
        "a rank whose SDMA/RDMA bandwidth is far below the other ranks' (cluster_communication.json)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const std::vector<RankLinkBandwidth> links = rank_link_bandwidth(ctx.trace);
    for (std::string_view type : {"RDMA", "SDMA"}) {
      // Compared: rank-steps that moved data over this transport (docs/communication.md: the
      // advisor also averages in zeros of ranks that moved none).
      std::vector<RankLink> moved;
      for (const RankLinkBandwidth& b : links) {
        RankLink l{b.step_number, b.rank, type == "SDMA" ? b.sdma_mb : b.rdma_mb, type == "SDMA" ? b.sdma_ms : b.rdma_ms};
        if (l.size_mb > 0) moved.push_back(l);
      }
      if (moved.size() < 2) continue;
      double sum = 0;
      for (const RankLink& l : moved) sum += l.gbs();
      const double mean = sum / double(moved.size());
      // The first rank-step at the minimum and at the maximum, as the advisor's list.index().
      auto by_gbs = [](const RankLink& a, const RankLink& b) { return a.gbs() < b.gbs(); };
      auto lo = std::min_element(moved.begin(), moved.end(), by_gbs);
      auto hi = std::max_element(moved.begin(), moved.end(), by_gbs);
      const double spread = hi->gbs() - lo->gbs();
      const double ratio = mean > 0 ? spread / mean : 0;
      if (ratio < kSlowLinkShare) continue;

      Finding f;
      f.rule = "COMM004";
      f.severity = Severity::Warning;
      f.message = fmt::format("slow {} link: rank {}{} at {} GB/s, rank {}{} at {} GB/s (mean {:.3f}, spread {:.1f}% of it)",
                              type, lo->rank, lo->step_number >= 0 ? fmt::format(" step {}", lo->step_number) : "", gbs_text(lo->gbs()),
                              hi->rank, hi->step_number >= 0 ? fmt::format(" step {}", hi->step_number) : "", gbs_text(hi->gbs()), mean,
                              ratio * 100);
      f.location.op = std::string(type);
      f.metrics = {{"slow_rank", double(lo->rank)},  {"slow_step", double(lo->step_number)}, {"fast_rank", double(hi->rank)},
                   {"min_gbs", lo->gbs()},           {"max_gbs", hi->gbs()},          {"mean_gbs", mean},
                   {"spread_gbs", spread},           {"spread_ratio", ratio},         {"rank_steps", double(moved.size())}};
      // Time the slow rank lost: its transfer at the mean bandwidth would have taken size / mean.
      f.cost_ns = ms_to_ns(std::max(0.0, lo->time_ms - lo->size_mb / mean));
      for (const RankLink& l : moved) {
        f.notes.push_back(advice("COMM004", "rank_note",
                                 {{"rank", l.rank},
                                  {"step", l.step_number >= 0 ? advice("COMM", "step_suffix", {{"step", l.step_number}}) : ""},
                                  {"mb", fmt::format("{:.4f}", l.size_mb)},
                                  {"ms", fmt::format("{:.4f}", l.time_ms)},
                                  {"gbs", gbs_text(l.gbs())}}));
        f.metrics.push_back({fmt::format("rank.{}.step.{}.gbs", l.rank, l.step_number), l.gbs()});
      }
      f.fix = advice("COMM004", "fix",
                     {{"rank", lo->rank},
                      {"transport", type},
                      {"path", advice("COMM004", type == "RDMA" ? "path_rdma" : "path_sdma")}});
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& comm004_rule() {
  static const SlowLink rule;
  return rule;
}

}  // namespace npud
