// The cluster view as SARIF (and `--format github`): the ranks' findings, each once, for code
// scanning.
#include <fmt/format.h>

#include "cluster/cluster_report.hpp"

namespace npud {

namespace {

// The profile a rank was read from (as its summary recorded it): where a finding of that rank
// without a source line is put. The first rank's when `rank` is not one of the report's.
const std::string& rank_input(const ClusterReport& r, int64_t rank) {
  for (const RankRow& row : r.ranks)
    if (row.rank == rank) return row.source;
  return r.ranks.empty() ? r.source : r.ranks.front().source;
}

}  // namespace

SarifLog cluster_sarif_log(const ClusterReport& r, SarifPaths paths) {
  // Which ranks a finding is on, against the ranks read (and the job's size when ranks are missing).
  const size_t read = r.ranks.size();
  const std::string world =
      r.world_size > int64_t(read) ? fmt::format("; world size {}", r.world_size) : std::string();
  const int64_t first_rank = r.ranks.empty() ? -1 : r.ranks.front().rank;
  // The ranks' frames are as untrusted as any trace's: source only from the working directory.
  const SnippetPolicy policy = snippet_policy(nullptr, false);
  SourceLineCache lines(&policy);
  std::vector<SarifResult> results;
  results.reserve(r.common.size() + r.partial.size() + r.links.size());
  for (const Finding& f : r.common) {
    results.push_back(sarif_result(f, rank_input(r, first_rank), lines));
    results.back().message += fmt::format(" (on all {} ranks read{})", read, world);
  }
  for (const PartialFinding& p : r.partial) {
    results.push_back(sarif_result(p.finding, rank_input(r, p.ranks.empty() ? first_rank : p.ranks.front()), lines));
    results.back().message +=
        fmt::format(" (on rank{} {} of the {} read{})", p.ranks.size() == 1 ? "" : "s", rank_list(p.ranks), read, world);
  }
  for (const Finding& f : r.links) results.push_back(sarif_result(f, rank_input(r, first_rank), lines));
  return sarif_log(std::move(results), std::move(paths));
}

}  // namespace npud
