// Baselines (docs/configuration.md): `--write-baseline FILE` records the findings of today;
// `--baseline FILE` then reports (and fails on) only the findings not in it, so CI can fail
// on new problems while old ones are worked off.
//
// A finding matches a baseline entry by rule id, file and a fingerprint of what stays when the
// program did not change, never a line number, time, count or rank (issue 40):
// - the stripped text of the finding's source line when that file can be read (so lines added
//   above it do not break the match), with the op a trace finding names;
// - else the op and, inside an installed package, the package's file and function;
// - else the message with its numbers and their units blanked;
// - a rule ranking measured times (HOT001, Rule::ranks_timings): which ops make its list
//   changes from run to run, so its entries hold how many, not which.
// Files are recorded relative to the baseline's folder when inside it, so a baseline committed
// to the repository works in any checkout. Each entry absorbs one finding: a second `.item()`
// on a copied line is new. Format 1 files (before the op and ranking keys) still load, matched
// by the fingerprint they were written with.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "source/source_snippet.hpp"
#include "model/finding.hpp"

namespace npud {

struct BaselineEntry {
  std::string id, file, fingerprint;
  std::string format1_fingerprint;   // what a format 1 file holds for it (never written)
  int line = 0;          // for people reading the file; not matched
  std::string message;   // idem
};

// `baseline_path`: the baseline file (entries' files are relative to its folder). scan's
// findings, which name no op:
BaselineEntry baseline_entry(std::string_view rule, const std::string& file, int line, const std::string& message,
                             const std::string& baseline_path, SourceLineCache& lines);
// A trace finding (analyze, run, amp-check).
BaselineEntry baseline_entry(const Finding& f, const std::string& baseline_path, SourceLineCache& lines);

class Baseline {
 public:
  // Throws std::runtime_error ("FILE: not an npu-doctor baseline ...").
  static Baseline load(const std::string& path);
  // True (and the entry is used up) when the baseline holds this finding.
  bool take(const BaselineEntry& e);

 private:
  std::map<std::tuple<std::string, std::string, std::string>, int> left_;
  int64_t format_ = 0;
};

// Writes the entries as a baseline file (atomically). Throws std::runtime_error.
void write_baseline(const std::string& path, std::string_view command, const std::vector<BaselineEntry>& entries);

// The baseline step of analyze/run/amp-check: writes `write_path` from the findings (when set),
// and drops those `baseline_path` holds (when set). Returns how many it dropped; throws
// std::runtime_error for a bad baseline file.
size_t apply_baseline(std::vector<Finding>& findings, const std::string& baseline_path, const std::string& write_path,
                      std::string_view command, const SnippetPolicy& policy);

}  // namespace npud
