// The reports of `npu-doctor scan`: each finding at its file:line:column with its fix, what the
// scan left out, and the SARIF log code scanning uploads.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "knowledge/knowledge.hpp"
#include "report/sarif.hpp"
#include "report/text_style.hpp"
#include "source/scanner.hpp"

namespace npud {

// What the scan left out, and the configuration used: said in every report format.
struct ScanLeftOut {
  std::string config_file;
  size_t suppressed = 0, baselined = 0;
};

void render_scan_text(std::ostream& os, const std::vector<FileResult>& results, size_t fixed, TextStyle style,
                      const ScanLeftOut& left);
void render_scan_json(std::ostream& os, const std::vector<FileResult>& results, const KnowledgeVersion& version,
                      size_t fixed, const ScanLeftOut& left);
// The scan as a SARIF log (also `--format github`): every source rule, each finding at its span.
SarifLog scan_sarif_log(const std::vector<FileResult>& results, SarifPaths paths);

}  // namespace npud
