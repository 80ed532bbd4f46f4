// msprof-analyze's cluster output (`cluster_analysis_output/`: cluster_step_trace_time.csv and
// cluster_communication.json) read as rank summaries, so a cluster someone already ran
// msprof-analyze on gets the same cluster view as one read from rank profiles.
#pragma once

#include <string>
#include <vector>

#include "cluster/rank_summary.hpp"

namespace npud {

// The cluster_analysis_output directory at or directly under `dir`; empty when there is none.
std::string find_msprof_cluster_output(const std::string& dir);

// One summary per `rank` row of cluster_step_trace_time.csv (µs → ns), with each rank's
// communication wait from cluster_communication.json when that file is there.
// Throws InputError (file, byte offset) on bad input.
std::vector<RankSummary> read_msprof_cluster(const std::string& output_dir);

}  // namespace npud
