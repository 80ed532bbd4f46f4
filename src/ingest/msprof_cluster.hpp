// msprof-analyze's cluster output (`cluster_analysis_output/`: cluster_step_trace_time.csv and
// cluster_communication.json) read into the event model's tables, per rank. The cluster view
// (cluster/msprof_ranks.hpp) turns them into rank summaries, so a cluster someone already ran
// msprof-analyze on gets the same view as one read from rank profiles.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/trace.hpp"

namespace npud {

struct MsprofClusterOutput {
  std::string step_table;      // path of cluster_step_trace_time.csv
  std::string communication;   // path of cluster_communication.json; empty when there is none
  // The table's "rank" rows (its "stage" rows aggregate ranks and are left out), by rank, in
  // file order.
  std::map<int64_t, std::vector<StepTraceTime>> rank_steps;
  // Per rank and step number (-1: a "step" key without a number), the "Wait Time(ms)" of
  // every collective, in ns; "Total Op Info" entries repeat the ops' sums and are skipped.
  std::map<std::pair<int64_t, int64_t>, int64_t> waits;
  Trace comm;                  // every rank's collectives (CommOp::rank set), when communication is there
};

// The cluster_analysis_output directory at or directly under `dir`; empty when there is none.
std::string find_msprof_cluster_output(const std::string& dir);

// Reads the directory find_msprof_cluster_output named. Throws InputError (file, byte offset)
// on bad input, and when the step table has no "rank" row.
MsprofClusterOutput read_msprof_cluster_output(const std::string& output_dir);

}  // namespace npud
