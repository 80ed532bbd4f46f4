// The cluster view as SARIF: the ranks' findings, each once, for code scanning.
#include <fmt/format.h>

#include "cluster/cluster_report.hpp"
#include "report/sarif.hpp"

namespace npud {

void render_cluster_sarif(std::ostream& os, const ClusterReport& r) {
  // Which ranks a finding is on, against the ranks read (and the job's size when ranks are missing).
  const size_t read = r.ranks.size();
  const std::string world =
      r.world_size > int64_t(read) ? fmt::format("; world size {}", r.world_size) : std::string();
  std::vector<Finding> findings;
  findings.reserve(r.common.size() + r.partial.size() + r.links.size());
  for (const Finding& f : r.common) {
    findings.push_back(f);
    findings.back().message += fmt::format(" (on all {} ranks read{})", read, world);
  }
  for (const PartialFinding& p : r.partial) {
    findings.push_back(p.finding);
    findings.back().message +=
        fmt::format(" (on rank{} {} of the {} read{})", p.ranks.size() == 1 ? "" : "s", rank_list(p.ranks), read, world);
  }
  findings.insert(findings.end(), r.links.begin(), r.links.end());
  render_sarif(os, sarif_from_findings(findings));
}

}  // namespace npud
