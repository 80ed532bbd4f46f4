// What happens to a scan's findings after its rules ran: per-file-ignores, --baseline and
// --write-baseline, and --fix/--diff applying the fixes that are left (docs/configuration.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/baseline.hpp"
#include "source/scanner.hpp"
#include "source/suppressions.hpp"

namespace npud {

// What --fix and --diff leave alone: findings the configuration's per-file-ignores or the
// --baseline leave out of the report (comments' suppressions never reach here: scan_source
// drops them). docs/configuration.md says so.
struct HeldBack {
  const PathIgnores* ignores = nullptr;
  std::optional<Baseline> baseline;
  std::string baseline_path;

  // The findings of r (whose text is now `text`) that may be fixed.
  std::vector<Finding> fixable(const FileResult& r, std::string_view text,
                               const std::vector<Finding>& findings) const;
};

// Applies each file's fixes (re-scanning until nothing more applies, at most 4 rounds) and
// either writes the files (write) or prints a diff. Returns the number of fixed findings;
// io_error is set when a file could not be written.
size_t fix_files(std::vector<FileResult>& results, const ScanOptions& opts, bool write, bool& io_error,
                 const HeldBack& held);
// per-file-ignores of the configuration: drops those findings; returns how many.
size_t drop_path_ignored(std::vector<FileResult>& results, const PathIgnores& ignores);
// --write-baseline (when not ""), then --baseline (when not ""). Returns how many the baseline held.
size_t apply_scan_baseline(std::vector<FileResult>& results, const std::string& baseline,
                           const std::string& write_baseline_path);

}  // namespace npud
