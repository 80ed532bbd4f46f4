#include "cluster/msprof_ranks.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>

namespace npud {

std::vector<RankSummary> msprof_rank_summaries(const MsprofClusterOutput& output) {
  const std::string table_name = std::filesystem::path(output.step_table).filename().string();
  const std::string comm_name = std::filesystem::path(output.communication).filename().string();
  std::vector<RankSummary> out;
  for (const auto& [rank, rows] : output.rank_steps) {
    RankSummary s;
    s.rank = rank;
    s.world_size = int64_t(output.rank_steps.size());
    s.source = output.step_table;
    s.format = "msprof-cluster";
    s.step_source = table_name;
    for (const StepTraceTime& row : rows) s.steps.push_back(step_from_step_trace(row));
    for (auto it = output.waits.lower_bound({rank, std::numeric_limits<int64_t>::min()}); it != output.waits.end() && it->first.first == rank;
         ++it) {
      const int64_t number = it->first.second;
      // A "step" key without a number belongs to a rank's only step.
      for (StepBreakdown& b : s.steps)
        if (b.number == number || (number < 0 && s.steps.size() == 1)) {
          b.comm_wait_ns = std::max<int64_t>(b.comm_wait_ns, 0) + it->second;
          s.wait_source = comm_name;
        }
    }
    if (!output.communication.empty()) s.comm_ops = rank_comm_ops(output.comm, rank);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<RankSummary> read_msprof_cluster(const std::string& output_dir) {
  return msprof_rank_summaries(read_msprof_cluster_output(output_dir));
}

}  // namespace npud
