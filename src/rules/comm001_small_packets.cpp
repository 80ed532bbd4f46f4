// COMM001 small-packets: most SDMA (< 16 MB) or RDMA (< 1 MB) transfers of the rank's
// collectives are small, so launch and handshake overheads dominate the transfer time.
// msprof-analyze's "Packet Analysis" (advisor/analyzer/communication/packet). docs/rules/COMM001.md.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/comm_support.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

struct Tally {
  size_t count = 0, small = 0;
  double small_ms = 0, mb = 0;
};

struct KindTally {
  Tally sdma, rdma;
  std::map<double, std::pair<int64_t, double>> sizes;  // packet MB -> (count, ms), SDMA and RDMA
};

class SmallPackets final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"COMM001", "small-packets",
        "collectives moving small SDMA (< 16 MB) / RDMA (< 1 MB) transfers (communication.json)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    Tally sdma, rdma;
    std::map<std::string_view, KindTally> kinds;
    for (const CommOp& op : t.comm_ops) {
      if (op.rank >= 0) continue;  // cluster_communication.json records: the cluster view's
      KindTally& k = kinds[collective_kind(t.str(op.name))];
      auto tally = [&](std::string_view type, double limit, Tally& all, Tally& mine) {
        const CommTransport* tr = t.transport(op, type);
        if (!tr || tr->size_mb <= 0) return;  // the advisor counts ops that moved data only
        ++all.count, ++mine.count;
        all.mb += tr->size_mb, mine.mb += tr->size_mb;
        if (tr->size_mb < limit) {
          ++all.small, ++mine.small;
          all.small_ms += tr->time_ms, mine.small_ms += tr->time_ms;
        }
        for (const CommPacketSize& p : t.packet_sizes(*tr)) {
          auto& s = k.sizes[p.size_mb];
          s.first += p.count;
          s.second += p.time_ms;
        }
      };
      tally("SDMA", kSmallSdmaMb, sdma, k.sdma);
      tally("RDMA", kSmallRdmaMb, rdma, k.rdma);
    }
    auto ratio = [](const Tally& x) { return x.count ? double(x.small) / double(x.count) : 0.0; };
    bool sdma_issue = ratio(sdma) > kSmallPacketShare, rdma_issue = ratio(rdma) > kSmallPacketShare;
    if (!sdma_issue && !rdma_issue) return;

    Finding f;
    f.rule = "COMM001";
    f.severity = Severity::Warning;
    std::vector<std::string> parts;
    if (sdma_issue)
      parts.push_back(fmt::format("{} of {} SDMA transfers under {} MB ({}), {:.4f} ms", sdma.small, sdma.count,
                                  kSmallSdmaMb, format_share(ratio(sdma)), sdma.small_ms));
    if (rdma_issue)
      parts.push_back(fmt::format("{} of {} RDMA transfers under {} MB ({}), {:.4f} ms", rdma.small, rdma.count,
                                  kSmallRdmaMb, format_share(ratio(rdma)), rdma.small_ms));
    f.message = fmt::format("small communication packets: {}", fmt::join(parts, "; "));
    f.location.op = sdma_issue ? "SDMA" : "RDMA";
    f.metrics = {{"sdma_count", double(sdma.count)},     {"sdma_small_count", double(sdma.small)},
                 {"sdma_small_ratio", ratio(sdma)},      {"sdma_small_ms", sdma.small_ms},
                 {"rdma_count", double(rdma.count)},     {"rdma_small_count", double(rdma.small)},
                 {"rdma_small_ratio", ratio(rdma)},      {"rdma_small_ms", rdma.small_ms}};
    f.cost_ns = ms_to_ns((sdma_issue ? sdma.small_ms : 0) + (rdma_issue ? rdma.small_ms : 0));
    // Per collective: how many of its transfers are small, and its most frequent packet sizes.
    std::vector<std::pair<std::string_view, const KindTally*>> order;
    for (const auto& [name, k] : kinds) order.emplace_back(name, &k);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a.second->sdma.small + a.second->rdma.small > b.second->sdma.small + b.second->rdma.small;
    });
    for (const auto& [name, k] : order) {
      if (k->sdma.count + k->rdma.count == 0) continue;
      std::vector<std::pair<double, std::pair<int64_t, double>>> sizes(k->sizes.begin(), k->sizes.end());
      std::stable_sort(sizes.begin(), sizes.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
      std::vector<std::string> top;
      for (size_t i = 0; i < sizes.size() && i < 3; ++i)
        top.push_back(fmt::format("{} x {:g} MB", sizes[i].second.first, sizes[i].first));
      f.notes.push_back(advice("COMM001", "packets_note",
                               {{"collective", name},
                                {"sdma_small", k->sdma.small},
                                {"sdma_count", k->sdma.count},
                                {"sdma_mb", fmt::format("{:.3f}", k->sdma.mb)},
                                {"rdma_small", k->rdma.small},
                                {"rdma_count", k->rdma.count},
                                {"rdma_mb", fmt::format("{:.3f}", k->rdma.mb)},
                                {"packets", top.empty() ? "" : advice("COMM001", "packets", {{"list", fmt::format("{}", fmt::join(top, ", "))}})}}));
      f.metrics.push_back({fmt::format("collective.{}.sdma_count", name), double(k->sdma.count)});
      f.metrics.push_back({fmt::format("collective.{}.sdma_small", name), double(k->sdma.small)});
      f.metrics.push_back({fmt::format("collective.{}.rdma_count", name), double(k->rdma.count)});
      f.metrics.push_back({fmt::format("collective.{}.rdma_small", name), double(k->rdma.small)});
    }
    f.fix = advice("COMM001", "fix");
    out.push_back(std::move(f));
  }
};

}  // namespace

const Rule& comm001_rule() {
  static const SmallPackets rule;
  return rule;
}

}  // namespace npud
