// The merged summary (`merge --format summary`, `analyze DIR --format summary`): a ClusterInput
// written as compact JSON, read back by `merge` like any rank summary, so merges compose into a
// tree reduce whose result equals one flat merge (docs/cluster.md "Merged summary").
#pragma once

#include <ostream>
#include <string>

#include "cluster/cluster_input.hpp"

namespace npud {

void write_merged_summary(std::ostream& os, const ClusterInput& in, const std::string& source);
// Folds the merged summary at `path` into `into`; throws InputError naming the file (and the
// byte offset where the JSON itself is bad).
void read_merged_summary(const std::string& path, ClusterInput& into);

}  // namespace npud
