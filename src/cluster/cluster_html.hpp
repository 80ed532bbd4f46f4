// The cluster's HTML page; the pieces it shares with the other pages are report/html_parts.hpp's.
#pragma once

#include <ostream>

#include "cluster/cluster_report.hpp"

namespace npud {

// The cluster view (docs/cluster.md): per-rank step bars, slow ranks, findings only some
// ranks have, the per-rank table.
void render_cluster_html(std::ostream& os, const ClusterReport& report);

}  // namespace npud
