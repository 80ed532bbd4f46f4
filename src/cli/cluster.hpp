// The cluster view from the command line: `analyze DIR` on a directory of rank profiles
// (read in parallel, one rank per worker, each dropped once summarised) and `merge` of rank
// summaries written elsewhere. docs/cluster.md.
#pragma once

#include <string>
#include <vector>

#include "cli/analyze.hpp"

namespace npud {

// True for a directory holding msprof-analyze's cluster output or two or more rank profiles.
bool is_cluster_input(const std::string& path);

// The rank profiles of a directory, sorted: Kineto/capture files (*.json, *.json.gz) and
// torch_npu run directories (*_ascend_pt, or any holding ASCEND_PROFILER_OUTPUT). What looks
// like a rank but is not one (a directory named rank-3.json) is appended to `skipped` as a
// note naming it.
std::vector<std::string> rank_inputs_in(const std::string& dir, std::vector<std::string>* skipped = nullptr);

// `analyze DIR` in cluster mode. Returns the exit code.
int analyze_cluster(const std::string& dir, const AnalyzeOptions& opts);

// The cluster view of the per-rank captures of one `run` (a distributed launch: one
// capture.rank<R>.npud.json per worker), `label` naming the run. Returns the exit code.
int analyze_rank_captures(const std::vector<std::string>& captures, const std::string& label,
                          std::vector<std::string> notes, const AnalyzeOptions& opts);

}  // namespace npud
