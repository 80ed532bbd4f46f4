// msprof-analyze's cluster output as rank summaries (ingest/msprof_cluster.hpp reads it): the
// same cluster view as one built from rank profiles.
#pragma once

#include <string>
#include <vector>

#include "cluster/rank_summary.hpp"
#include "ingest/msprof_cluster.hpp"

namespace npud {

// One summary per rank of the step table (µs → ns), with each rank's communication wait and
// collectives from cluster_communication.json when that file is there.
std::vector<RankSummary> msprof_rank_summaries(const MsprofClusterOutput& output);

// Reads `output_dir` (find_msprof_cluster_output) and summarises its ranks. Throws InputError.
std::vector<RankSummary> read_msprof_cluster(const std::string& output_dir);

}  // namespace npud
