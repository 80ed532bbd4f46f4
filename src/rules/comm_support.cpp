#include "rules/comm_support.hpp"

#include <map>

#include <fmt/format.h>

namespace npud {

std::string_view collective_kind(std::string_view op_name) {
  size_t cut = op_name.find("__");
  return cut == op_name.npos ? op_name : op_name.substr(0, cut);
}

std::vector<RankLinkBandwidth> rank_link_bandwidth(const Trace& t) {
  std::map<std::pair<int64_t, int64_t>, RankLinkBandwidth> links;
  for (const CommOp& op : t.comm_ops) {
    if (op.rank < 0) continue;
    RankLinkBandwidth& l = links[{op.step_number, op.rank}];
    l.step_number = op.step_number, l.rank = op.rank;
    if (const CommTransport* tr = t.transport(op, "SDMA")) l.has_sdma = true, l.sdma_mb += tr->size_mb, l.sdma_ms += tr->time_ms;
    if (const CommTransport* tr = t.transport(op, "RDMA")) l.has_rdma = true, l.rdma_mb += tr->size_mb, l.rdma_ms += tr->time_ms;
  }
  std::vector<RankLinkBandwidth> out;
  for (const auto& [key, l] : links) out.push_back(l);
  return out;
}

std::string gbs_text(double gbs) { return std::isfinite(gbs) ? fmt::format("{:.4g}", gbs) : "-"; }

}  // namespace npud
