// What a rule reports. One shape for every rule, every input and every output format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace npud {

enum class Severity : uint8_t { Info = 0, Warning = 1, Error = 2 };
std::string_view to_string(Severity s);
std::optional<Severity> parse_severity(std::string_view s);

// Where, inside an installed package, the cause of a finding is (docs/library-advice.md): the
// finding itself is anchored at the program's own frame that led there.
struct LibrarySite {
  std::string package;   // "transformers"
  std::string version;   // "5.17.0" ("" unknown)
  std::string file;      // inside the package: "masking_utils.py"
  int line = 0;
  std::string function;  // "sdpa_mask"
  std::string cause;     // the advice's cause id when data/advice knows the site, else ""
  bool empty() const { return package.empty(); }
  // "transformers 5.17.0, masking_utils.py:269 (_ignore_causal_mask_sdpa)"
  std::string describe() const;
};

struct Location {
  std::string file;     // the program's source file, when known
  int line = 0;
  std::string op;       // op / kernel name, when the finding is about one
  std::string module;   // module path, when known
  LibrarySite library;  // the cause's site when it is inside an installed package
  int column = 0;       // scan: 1-based, in Unicode code points; the span's end (0: unknown)
  int end_line = 0;
  int end_column = 0;
  // file:line is a frame's that encloses the op (a Kineto trace's running `<module>`: where the
  // script was when the profiler started), not the op's call: shown, suppressible and uploaded
  // there, but no site to group ops by (call_site below).
  bool enclosing = false;
  // "train.py:95", "train.py" (no line), "train.py:311 (top level at profiler start)" (enclosing),
  // "" with no file.
  std::string file_line() const;
};

// "train.py:95" / "aten::copy_" / "" — the shortest way to say where; with a library site,
// "train.py:51 (in transformers 5.17.0, masking_utils.py:269 (sdpa_mask))".
std::string where(const Location& loc);
// Whether file:line is where this op was called: false with no file, or an enclosing frame's
// line that every op of a traced loop shares (Location::enclosing).
bool call_site(const Location& loc);
// What one finding groups by: the program's line and, inside a package, the package site
// (its cause when data/advice knows it): two library causes reached from one line stay two.
std::string site_key(const Location& loc);
// A library site with no program frame recorded beside it (captures of shims before 0.2 kept
// the 8 innermost frames only): file:line are the package's.
bool no_program_frame(const Location& loc);

// Replace bytes [start, end) of the file with `replacement` (start == end: an insertion).
struct TextEdit {
  size_t start = 0;
  size_t end = 0;
  std::string replacement;
};

struct Metric {
  std::string key;      // stable, snake_case: "count", "per_step", "time_ns", "time_share", "bytes"
  double value = 0;
};

struct Finding {
  std::string rule;             // stable rule id, e.g. "SYNC001"
  Severity severity = Severity::Warning;
  std::string message;          // one line, says what and how much
  Location location;
  std::vector<Metric> metrics;  // evidence
  int64_t cost_ns = 0;          // estimated time lost (what the findings are ranked by)
  std::string fix;              // suggestion, may hold a code snippet
  std::vector<std::string> notes;  // extra lines of context
  std::vector<TextEdit> edits;     // scan's exact fix (`scan --fix`); empty when none is mechanical
  // Said before every other finding, whatever its cost: the input is incomplete (CAPTURE001).
  bool first = false;

  bool fixable() const { return !edits.empty(); }   // scan: an exact edit `--fix` applies

  double metric(std::string_view key, double fallback = 0) const {
    for (const auto& m : metrics)
      if (m.key == key) return m.value;
    return fallback;
  }
};

// What makes two findings (of two runs, or two ranks) the same problem: rule, file, line, op
// and library site agree; counts, costs and wording may differ.
std::string finding_identity(const Finding& f);

}  // namespace npud
