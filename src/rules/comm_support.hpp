// What the COMM rules share (docs/communication.md): msprof-analyze's thresholds, the
// collective kind of an HCCL op name, and ms <-> ns.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.hpp"

namespace npud {

// advisor rules/en/*.yaml (msprof-analyze 26.2.0).
inline constexpr double kSmallSdmaMb = 16, kSmallRdmaMb = 1, kSmallPacketShare = 0.2;  // packet.yaml
inline constexpr double kSdmaRatedGbs = 18, kContentionShare = 0.8;                   // bandwidth_contention.yaml
inline constexpr int64_t kAlignBytes = 512;                                           // byte_alignment.yaml
inline constexpr double kSlowLinkShare = 0.05;                                        // slow_link_analyzer.py
inline constexpr double kRetransmissionMs = 4000;                                     // rdma_analysis.yaml

inline int64_t ms_to_ns(double ms) { return std::isfinite(ms) ? int64_t(std::llround(ms * 1e6)) : 0; }

// "hcom_allReduce__123_0" -> "hcom_allReduce": the collective, without its call numbers.
std::string_view collective_kind(std::string_view op_name);

// One rank's SDMA / RDMA traffic in one step, summed over its collectives (the ranks' CommOp
// records: cluster_communication.json or each rank's communication.json). Bandwidths are
// rounded to 4 decimals as msprof-analyze's ClusterCommunicationDataset does.
struct RankLinkBandwidth {
  int64_t step_number = -1, rank = -1;   // step as recorded (-1: not numbered)
  double sdma_mb = 0, sdma_ms = 0, rdma_mb = 0, rdma_ms = 0;
  bool has_sdma = false, has_rdma = false;   // a record of that transport (possibly 0 MB)
  static double gbs(double mb, double ms) { return ms > 1e-15 ? std::round(mb / ms * 1e4) / 1e4 : 0; }
  double sdma_gbs() const { return gbs(sdma_mb, sdma_ms); }
  double rdma_gbs() const { return gbs(rdma_mb, rdma_ms); }
};
// By (step, rank); only CommOps with a rank (CommOp::rank >= 0).
std::vector<RankLinkBandwidth> rank_link_bandwidth(const Trace& t);

// "12.3457" (4 decimals, as msprof-analyze rounds bandwidths), "-" for NaN.
std::string gbs_text(double gbs);

}  // namespace npud
