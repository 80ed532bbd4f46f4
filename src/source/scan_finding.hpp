// What the static scan reports: a finding at a source position, with an optional exact fix.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/finding.hpp"

namespace npud {

struct ScanFinding {
  std::string rule;             // stable id, e.g. "CUDA002"
  Severity severity = Severity::Warning;
  int line = 0;                 // 1-based
  int column = 0;               // 1-based, in Unicode code points
  int end_line = 0;
  int end_column = 0;
  std::string message;          // one line: what and why it matters on the NPU
  std::string fix;              // suggestion for a person (code or an instruction)
  std::vector<TextEdit> edits;  // exact fix; empty when none is mechanical

  bool fixable() const { return !edits.empty(); }
};

}  // namespace npud
