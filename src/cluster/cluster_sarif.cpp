// The cluster view as SARIF: the ranks' findings, each once, for code scanning.
#include <fmt/format.h>

#include "cluster/cluster_report.hpp"
#include "report/sarif.hpp"

namespace npud {

void render_cluster_sarif(std::ostream& os, const ClusterReport& r) {
  std::vector<Finding> findings;
  findings.reserve(r.common.size() + r.partial.size() + r.links.size());
  for (const Finding& f : r.common) {
    findings.push_back(f);
    findings.back().message += fmt::format(" (on every rank: {})", r.ranks.size());
  }
  for (const PartialFinding& p : r.partial) {
    findings.push_back(p.finding);
    findings.back().message += fmt::format(" (on rank{} {} of {})", p.ranks.size() == 1 ? "" : "s", rank_list(p.ranks),
                                           r.ranks.size());
  }
  findings.insert(findings.end(), r.links.begin(), r.links.end());
  render_sarif(os, sarif_from_findings(findings));
}

}  // namespace npud
