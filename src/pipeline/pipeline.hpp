// The one analysis of a read trace (docs/design.md, "Pipeline"): analyze, run, amp-check, each
// rank of the cluster view and both sides of `diff` call it, so a setting (the knowledge
// version, the rule selection, a `# noqa` or per-file-ignore) means the same in all of them.
// Renderers only render what it returns.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "knowledge/knowledge.hpp"
#include "model/trace.hpp"
#include "pipeline/report.hpp"
#include "rules/rule.hpp"
#include "source/source_snippet.hpp"
#include "source/suppressions.hpp"

namespace npud {

struct AnalysisSettings {
  // --torch-npu, resolved once where the option is read (cli/analyze.hpp settings_or_report);
  // nullptr = chosen from the trace (choose_torch_npu).
  const KnowledgeVersion* torch_npu = nullptr;
  RuleOptions rule_options;
  std::vector<const Rule*> rules;      // the rules --select/--ignore leave (RuleFilter)
  // Recorded in the report; "run" and "amp-check" also read source where the program ran
  // (snippet_policy), for suppression comments and baseline fingerprints.
  std::string command = "analyze";
  PathIgnores path_ignores;            // the configuration's per-file-ignores
  std::string baseline, write_baseline;  // --baseline / --write-baseline ("" none; pipeline/baseline.hpp)
  std::string config_file;             // the configuration file used, "" none (the report says it)
  std::vector<std::string> notes;      // about the run itself: the report's notes and warnings
};

// A trace analysed: the report to render, the knowledge version it used, the context the
// rules ran in, whose index (built once, by the rules) the HTML timeline reads, and the folders
// its source may be read from (suppressions, baseline and SARIF fingerprints alike).
struct TraceAnalysis {
  Report report;
  const KnowledgeVersion& version;
  AnalysisContext context;
  SnippetPolicy source_policy;
};

// The knowledge version for a trace: `requested` (--torch-npu) when given; else the torch_npu
// the trace says was installed where it ran; else the newest release of the trace's torch line
// (its development tip when the line has no release); else the newest release. `why` says
// which, for the report. Never nullptr.
const KnowledgeVersion& choose_torch_npu(const KnowledgeVersion* requested, const Trace& trace, std::string& why);

// What stops an analysis before it has a report: a --baseline file
// that cannot be read, a --write-baseline that cannot be written. Callers say it and exit 2.
struct AnalysisError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Chooses the knowledge version, runs the rules, summarises, drops the findings suppression
// comments, per-file-ignores and the baseline hold (writing --write-baseline first), and adds
// the AMP summary and the trace's warnings. `trace` must outlive the result. Throws
// AnalysisError.
TraceAnalysis analyze_trace(const Trace& trace, const AnalysisSettings& settings);

}  // namespace npud
