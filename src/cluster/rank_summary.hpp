// What the cluster view needs of one rank, small enough to ship around: the per-step device
// time breakdown, each collective's duration (to tell waiting from transferring across ranks)
// and the rank's findings. `analyze --format summary` writes it; `merge` and `analyze DIR`
// combine them (docs/cluster.md has the JSON layout).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/step_breakdown.hpp"
#include "model/trace.hpp"
#include "model/finding.hpp"

namespace npud {

inline constexpr uint32_t kNoGroup = UINT32_MAX;

// One collective kernel/task, in the order the rank ran it. The n-th collective of a name
// within a step and process group is the same collective on every rank of that group.
struct Collective {
  uint32_t name = 0;            // index into RankSummary::collective_names
  uint32_t group = kNoGroup;    // index into RankSummary::group_names; kNoGroup: not recorded
  int64_t step_number = -1;     // -1: outside any step
  int64_t dur_ns = 0;
};

// One collective's record of a rank as communication.json / cluster_communication.json measured
// it: what COMM004 (slow link) and COMM005 (RDMA retransmission) compare across ranks.
struct RankCommOp {
  std::string group, name;      // group hash (rank set in cluster_communication.json), op name
  int64_t step_number = -1;     // as recorded; -1: not numbered
  double elapse_ms = 0;
  double sdma_mb = -1, sdma_ms = 0, sdma_gbs = 0;   // -1 MB: no SDMA record
  double rdma_mb = -1, rdma_ms = 0, rdma_gbs = 0;   // -1 MB: no RDMA record
};

struct RankSummary {
  int64_t rank = -1;            // -1: unknown (no distributedInfo, no rank in the file name)
  int64_t world_size = 0;       // 0: unknown
  std::string source;           // file or directory the rank was read from
  std::string format;           // input format name
  std::string torch_npu;        // knowledge version the rules used
  std::vector<std::pair<std::string, std::string>> env;  // torch, torch_npu, device_name... as recorded
  std::vector<StepBreakdown> steps;
  // The input the steps were measured from: "trace events" (a trace's kernels and ProfilerStep
  // markers), "step_trace_time.csv" (torch_npu's own table, read when there is no
  // trace_view.json) or "cluster_step_trace_time.csv" (msprof-analyze's); and the file the
  // measured waits came from ("communication.json", "cluster_communication.json"; empty: none).
  std::string step_source;
  std::string wait_source;
  std::vector<std::string> collective_names;
  std::vector<std::string> group_names;   // process groups as the trace records them ("0 [0, 1]")
  std::vector<Collective> collectives;
  bool collectives_truncated = false;   // more than kMaxCollectives: the rest were dropped
  std::vector<RankCommOp> comm_ops;     // HCCL ops with their SDMA/RDMA numbers ("comm_ops" when any)
  std::vector<Finding> findings;        // rule, severity, message, location, cost (no fix text)
  std::vector<std::string> warnings;    // the reader's warnings (first few)
  size_t warning_count = 0;
  // Set when this rank's summary run failed (write_failed_rank_summary): its error; the rank
  // holds nothing else, and merge reports it as failed, not as a rank without a profile.
  std::string failed;
};

inline constexpr size_t kMaxCollectives = 1'000'000;
inline constexpr std::string_view kStepsFromTrace = "trace events";

// The rank a file or directory name states ("rank-3", "rank_3", "rank3", torch_npu's
// profiler_info_3.json inside a run directory); -1 when none.
int64_t rank_in_path(const std::string& path);

// The summary of a read and analysed trace: its rank is the one the trace recorded, else the
// one its path states.
RankSummary summarize_rank(const Trace& trace, std::vector<Finding> findings, std::string torch_npu);

// A trace's CommOps as RankCommOps (the trace's own ops: those without a rank of their own).
std::vector<RankCommOp> rank_comm_ops(const Trace& trace, int64_t rank = -1);
// Every rank's RankCommOps as one Trace of CommOps with their ranks, for COMM004 / COMM005.
Trace comm_trace(const std::vector<const RankSummary*>& ranks);

// The "kind" every rank summary names in its first bytes, and the one of a merged summary
// (`merge --format summary`: many ranks, cluster/merged_summary.hpp).
inline constexpr std::string_view kRankSummaryKind = "npu-doctor-rank-summary";
inline constexpr std::string_view kMergedSummaryKind = "npu-doctor-merged-summary";

// Compact JSON, one rank (docs/cluster.md "Rank summary").
void write_rank_summary(std::ostream& os, const RankSummary& s);
// Reads what write_rank_summary wrote; throws InputError naming the file (and the byte
// offset where the JSON itself is bad).
RankSummary read_rank_summary(const std::string& path);
// What the file's first bytes name it (plain or gzipped): a rank summary, a merged summary, or
// neither.
enum class SummaryKind { None, Rank, Merged };
SummaryKind summary_kind_of(const std::string& path);
inline bool is_rank_summary_file(const std::string& path) { return summary_kind_of(path) != SummaryKind::None; }

// The summary of a rank whose summary run failed (or whose input could not be read): its
// rank, where it came from and the error; it holds nothing else.
RankSummary failed_rank(int64_t rank, std::string source, std::string error);

// What `analyze RANK --format summary -o FILE` writes when RANK cannot be read: a summary that
// says so, so merge names the failed rank instead of counting it missing (docs/cluster.md).
void write_failed_rank_summary(std::ostream& os, int64_t rank, const std::string& source, const std::string& error);

// The rank a file name states ("rank-3.json", "rank_12.trace.json.gz", "RANK7"), or -1.
int64_t rank_in_file_name(std::string_view path);

}  // namespace npud
