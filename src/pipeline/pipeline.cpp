#include "pipeline/pipeline.hpp"

#include <fmt/format.h>

#include "analysis/amp.hpp"
#include "pipeline/baseline.hpp"
#include "util/escape.hpp"
#include "source/source_snippet.hpp"
#include "util/text.hpp"

namespace npud {

const KnowledgeVersion& choose_torch_npu(const KnowledgeVersion* requested, const Trace& trace, std::string& why) {
  const Knowledge& kb = Knowledge::builtin();
  if (requested) {
    why = "--torch-npu";
    return *requested;
  }
  std::string_view npu = trace.env_value("torch_npu"), torch = trace.env_value("torch");
  if (!npu.empty()) {
    if (const KnowledgeVersion* v = kb.find(npu)) {
      why = "the torch_npu installed where the trace was recorded";
      return *v;
    }
  }
  if (!torch.empty()) {
    // The newest release of the trace's torch line: what installing torch_npu for it gives today.
    const KnowledgeVersion* best = nullptr;
    std::string_view line = torch.substr(0, torch.find_first_of("+a"));  // "2.1.0+cpu", "2.2.0a0"
    for (const KnowledgeVersion& v : kb.versions())
      if (v.torch == line && (v.kind == "release" || (!best && v.kind == "dev-tip"))) best = &v;
    if (best) {
      why = fmt::format("{} for torch {} of the trace{}", best->is_release() ? "newest release" : "only list",
                        terminal_safe(torch), npu.empty() ? "" : fmt::format(" (torch_npu {} is not known)", terminal_safe(npu)));
      return *best;
    }
  }
  why = "newest release; pass --torch-npu to choose the wheel you deploy";
  return kb.newest();
}

namespace {

// Every report's size follows what it shows, not the longest name of the input (bound_long_words).
void bound_finding_texts(Finding& f) {
  for (std::string* s : {&f.message, &f.fix, &f.location.op, &f.location.module}) *s = bound_long_words(*s);
  for (std::string& note : f.notes) note = bound_long_words(note);
}

}  // namespace

TraceAnalysis analyze_trace(const Trace& trace, const AnalysisSettings& s) {
  std::string why;
  const KnowledgeVersion& version = choose_torch_npu(s.torch_npu, trace, why);
  TraceAnalysis a{Report{}, version, AnalysisContext{trace, version, s.rule_options}};
  Report& report = a.report;
  report.command = s.command;
  report.summary = summarize(a.context.index());
  report.summary.torch_npu = version.version;
  report.summary.knowledge_note = fmt::format("{}; chosen: {}", version.source(), why);
  for (const Rule* r : s.rules) report.rules_run.emplace_back(r->id());
  report.findings = run_rules(a.context, s.rules);
  for (Finding& f : report.findings) bound_finding_texts(f);
  report.config_file = s.config_file;
  // One suppression step for every command that reads a trace (source/suppressions.hpp), then
  // the baseline: source is read as for snippets (the same folders, the same limits).
  a.source_policy = snippet_policy(&trace, s.command == "run" || s.command == "amp-check");
  report.suppressed = suppress_findings(report.findings, a.source_policy, s.path_ignores);
  try {
    report.baselined = apply_baseline(report.findings, s.baseline, s.write_baseline, s.command, a.source_policy);
  } catch (const std::exception& e) {
    throw AnalysisError(e.what());
  }
  if (trace.has_amp()) report.amp = summarize_amp(trace, version, s.rule_options.top_n);
  report.warnings = trace.warnings;
  report.notes = s.notes;
  for (const std::string& note : s.notes) report.warnings.push_back({note, 0});
  return a;
}

}  // namespace npud
