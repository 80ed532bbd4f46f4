// The cluster view: per-rank step breakdown, slow ranks (which dimension, how far from the
// other ranks' median, in which step), communication wait versus transfer, and the findings
// only some ranks have (the ones a user reading rank 0's log never sees). Built only from
// RankSummary records, so `analyze DIR` and `merge` of summaries written anywhere give the
// same report. docs/cluster.md.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cluster/rank_summary.hpp"
#include "model/finding.hpp"
#include "report/sarif.hpp"
#include "rules/comm_support.hpp"
#include "rules/rule.hpp"

namespace npud {

// One rank's means per step (ns). A rank left out of the comparisons (no time at all, or no
// steps among stepped ranks: ClusterReport::notes says which) has steps 0 and times -1.
struct RankRow {
  int64_t rank = -1;
  std::string source;
  size_t steps = 0;
  double step_ns = 0, computing_ns = 0, communication_ns = 0, overlapped_ns = 0, free_ns = 0;
  double comm_wait_ns = -1;         // -1: unknown
  double stage_ns = -1, bubble_ns = -1;  // step_trace_time's Stage / Bubble; -1: not recorded
  size_t findings = 0;              // HOT001 (a ranking, not a problem) not counted
  size_t warnings = 0;
  std::string step_source;          // RankSummary::step_source
  std::string wait_source;          // RankSummary::wait_source ("": no measured waits)
};

// msprof-analyze's slow-rank check in one dimension: the largest and the smallest value over
// every compared rank's steps and their difference, against 5 % of the mean step (computing +
// communication not overlapped + free). The same numbers as its advisor on the same inputs.
struct Spread {
  std::string dimension;            // "computing" | "communication not overlapped" | "free"
  double max_ns = 0, min_ns = 0;
  int64_t max_rank = -1, min_rank = -1;
  int64_t max_step = -1, min_step = -1;   // step numbers (-1: not numbered)
  double spread_ns = 0;             // max - min
  double mean_step_ns = 0;
  bool above = false;               // spread above kSlowShare of the mean step
};

// A rank that stands out in one dimension of the step breakdown.
struct SlowRank {
  int64_t rank = -1;
  std::string dimension;            // "computing" | "free" | "communication" | "transfer" | "wait" | "step"
  double value_ns = 0;              // the rank's mean per step
  double median_ns = 0;             // the other ranks' median of the same
  double share_of_step = 0;         // (value - median) / median step time
  int64_t worst_step = -1;          // step number where the rank is furthest from that step's median
  double worst_step_excess_ns = 0;
  Severity severity = Severity::Warning;
  std::string message;
};

// A finding (same rule, file, line and op) that some ranks have and others do not.
struct PartialFinding {
  Finding finding;                  // as the lowest rank that has it reported it
  std::vector<int64_t> ranks;
};

struct ClusterReport {
  std::string source;               // the directory or the summaries' common folder
  std::string torch_npu;            // knowledge version (the ranks' when they agree)
  int64_t world_size = 0;           // as the ranks recorded it (0: unknown)
  std::vector<int64_t> missing_ranks;   // 0..world_size-1 without a profile (first 64)
  size_t missing_count = 0;
  std::vector<RankRow> ranks;       // by rank
  double median_step_ns = 0;
  std::string wait_basis;           // "measured" (msprof) | "estimated from collectives" | ""
  std::vector<SlowRank> slow;       // worst first
  std::vector<Spread> spreads;      // computing, communication not overlapped, free (2+ compared ranks)
  std::vector<Finding> common;      // findings every rank has (one each, worst first)
  std::vector<PartialFinding> partial;  // findings only some ranks have, worst first
  // Findings across ranks' communication records (COMM004 slow link, COMM005 RDMA
  // retransmission: docs/communication.md), worst first.
  std::vector<Finding> links;
  std::vector<std::string> link_rules_run;   // which of COMM004/COMM005 --select/--ignore left
  // Each rank's SDMA / RDMA traffic per step (the numbers COMM004 compares); empty without
  // HCCL bandwidth records.
  std::vector<RankLinkBandwidth> link_bandwidth;
  std::vector<std::string> notes;   // duplicate ranks, truncated collectives, unreadable ranks, ranks left out
  // What the report could not believe, each naming its file (a world size of 2^62).
  std::vector<std::string> warnings;
  // Why the inputs look like more than one job (duplicate rank numbers, several world sizes):
  // then the slow ranks compare runs that never waited for each other. Empty: one job.
  std::vector<std::string> inconsistent;
};

// Slow-rank threshold: a dimension this far above the other ranks' median, as a share of the
// median step time (the advisor's slow-rank ratio, 5 %).
inline constexpr double kSlowShare = 0.05;

// A recorded world size above this is not believed (a warning names the file): the largest
// jobs have tens of thousands of ranks, and missing ranks are counted against it.
inline constexpr int64_t kMaxWorldSize = int64_t(1) << 20;

// `rules`: the rules --select/--ignore left (the link rules COMM004/COMM005 run over all ranks
// here, not per rank: only those of them in `rules`, issue 43); nullptr: every one (`merge`).
class ClusterInput;
ClusterReport build_cluster_report(const ClusterInput& ranks, std::string source,
                                   const std::vector<const Rule*>* rules = nullptr);
// The same for ranks not yet folded (cluster/cluster_input.hpp).
ClusterReport build_cluster_report(const std::vector<RankSummary>& ranks, std::string source,
                                   const std::vector<const Rule*>* rules = nullptr);

// Every string from the inputs (file names, op names, messages) goes through terminal_safe().
void render_cluster_text(std::ostream& os, const ClusterReport& r, bool color, bool verbose);
void render_cluster_json(std::ostream& os, const ClusterReport& r);
// The SARIF log (cluster_sarif.cpp; also `--format github`): the findings every rank has and
// those some have (the message names the ranks), each once, and the cross-rank link findings.
// One without a source line is put at the profile of the lowest rank that has it. Slow ranks
// and the step breakdown point at no source line: they are in the text, JSON and HTML views only.
SarifLog cluster_sarif_log(const ClusterReport& r, SarifPaths paths);

// "0,3,5" or "0,1,...,15,... (126 ranks)"; `total` counts ranks beyond those listed.
std::string rank_list(const std::vector<int64_t>& ranks, size_t total = 0, size_t max_shown = 16);
// Where a rank's finding is: "file:line", else its op.
std::string finding_place(const Finding& f);

// Which input the step times and the measured waits came from, by rank: "step times from:
// step_trace_time.csv (ranks 0,1,2,3)" (text and HTML).
std::vector<std::string> input_lines(const ClusterReport& r);
// A spread's times as msprof-analyze rounds them: "622.989 ms".
std::string spread_ms(double ns);
std::string step_label(int64_t step);
// The median of `v` (0 when empty): the slow ranks' medians and the text view's median row.
double median(std::vector<double> v);

// Worst severity in the report (slow ranks and findings); nullopt when there is nothing.
std::optional<Severity> worst_severity(const ClusterReport& r);

}  // namespace npud
