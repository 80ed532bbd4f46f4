// `npu-doctor analyze`: read a profile, run the rules, report. Also the last stage of
// `run` (which analyses the capture it just recorded).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/config.hpp"
#include "ingest/reader.hpp"
#include "model/finding.hpp"
#include "pipeline/pipeline.hpp"
#include "rules/rule.hpp"
#include "source/suppressions.hpp"

namespace npud {

struct AnalyzeOptions {
  std::string torch_npu;            // knowledge version; empty = from the trace, else the newest release
  std::string format = "text";      // text | json | html | sarif | github | summary
  std::string project_root;         // --project-root: what SARIF/github paths are relative to ("" = the git root)
  std::string output;               // file to write; empty = stdout
  std::string fail_on = "error";    // info | warning | error | never
  std::vector<std::string> select;  // rule ids or prefixes ("SYNC"); empty = all
  std::vector<std::string> ignore;
  RuleOptions rule_options;
  bool quiet = false;               // no progress, no warnings on stderr
  bool verbose = false;
  bool allow_truncated = false;
  uint64_t max_events = limits::kMaxEvents;  // 0: no limit
  // run/amp-check: the capture must hold a recorded step (else the report would be an
  // all-clear about nothing): print the report, say so, exit 2.
  std::string require_steps;        // the --steps that were asked for; empty = not required
  int program_exit_code = 0;        // run/amp-check: the program's exit status (128 + N: signal N)
  std::string command = "analyze";  // recorded in the report
  std::vector<std::string> report_notes;   // said at the top of the report (text) and in its warnings (JSON, HTML)
  // run/amp-check: the text report names files under the working directory relative to it, as
  // scan does (the capture recorded absolute paths); JSON and HTML keep them; SARIF says them
  // relative to --project-root whatever this is.
  bool text_paths_relative = false;
  unsigned jobs = 0;                // cluster view: ranks read at once (0: one per CPU)
  // From the configuration file (cli/config.hpp): its path ("" none), its per-file-ignores,
  // and whether select/ignore came from it (then not checked against this command's rules).
  std::string config_file;
  ConfigChoice config_choice;       // --config / --no-config
  PathIgnores path_ignores;
  bool select_from_config = false, ignore_from_config = false;
  std::string baseline, write_baseline;   // --baseline / --write-baseline (pipeline/baseline.hpp)
  std::string source_name;          // the input as reports name it, when not its path ("-": stdin)
};

// Adds the options shared by every command that ends in a report (analyze, run).
void add_report_options(CLI::App& cmd, AnalyzeOptions& opts);

// The rules --select/--ignore leave; throws std::invalid_argument for a --select that matches none.
std::vector<const Rule*> select_rules(const AnalyzeOptions& opts);


// kExitFindings when `worst` is at or above --fail-on, else kExitClean.
int exit_code_for(std::optional<Severity> worst, std::string_view fail_on);

// The settings of the analysis (pipeline/pipeline.hpp) these options ask for: --torch-npu
// resolved to its knowledge version (the one place it is), the rules --select/--ignore leave;
// `with_baseline`: also --baseline/--write-baseline (one trace's report, not each rank of a
// cluster or side of a diff). False after printing the error (an unknown version or rule).
bool settings_or_report(const AnalyzeOptions& opts, bool with_baseline, AnalysisSettings& settings);

// Reads `path`, runs the rules and renders the report. Returns the exit code; bad input
// is reported on stderr (file and byte offset) and gives kExitBadInput.
int analyze_trace_file(const std::string& path, const AnalyzeOptions& opts);

}  // namespace npud
