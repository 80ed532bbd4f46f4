// `npu-doctor diff BEFORE AFTER`: compares two traces or captures of the same program (anything
// `analyze` reads): step time, per-op time and count deltas, findings fixed and new.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/analyze.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/inputs.hpp"
#include "cli/output.hpp"
#include "diff/report_diff.hpp"
#include "diff/diff_html.hpp"
#include "diff/trace_diff.hpp"
#include "util/input_error.hpp"
#include "ingest/reader.hpp"
#include "knowledge/knowledge.hpp"
#include "pipeline/pipeline.hpp"
#include "util/escape.hpp"
#include "report/html_report.hpp"

namespace npud {
namespace {

struct DiffOptions {
  std::string before, after;
  std::string torch_npu;
  std::string format = "text";
  std::string output;
  size_t top = 15;
  bool quiet = false;
  bool allow_truncated = false;
  uint64_t max_events = limits::kMaxEvents;
  bool fail_on_regression = false;
  double max_slowdown_pct = 5;
  ConfigChoice config_choice;
};

// What --fail-on-regression fails on: findings AFTER has and BEFORE did not, or a step time
// more than max_slowdown_pct slower. "" when neither.
std::string regression(const TraceDiff& d, double max_slowdown_pct) {
  std::string why;
  if (!d.added.empty()) why = fmt::format("{} new finding{}", d.added.size(), d.added.size() == 1 ? "" : "s");
  if (d.before_step_ns > 0 && d.after_step_ns > 0) {
    double pct = 100.0 * (double(d.after_step_ns) - double(d.before_step_ns)) / double(d.before_step_ns);
    if (pct > max_slowdown_pct)
      why += fmt::format("{}step time {:.1f}% slower (limit {:g}%)", why.empty() ? "" : ", ", pct, max_slowdown_pct);
  }
  return why;
}

// diff of two npu-doctor JSON reports: findings fixed, new and remaining (diff/report_diff.hpp).
int diff_reports_command(const DiffOptions& o) {
  if (o.format != "text") {
    std::cerr << fmt::format("npu-doctor: error: diff of two reports writes text only (--format {} wants two traces "
                             "or captures)\n", o.format);
    return kExitBadInput;
  }
  ReportDiff d;
  try {
    d = diff_report_findings(read_report_findings(o.before), read_report_findings(o.after));
  } catch (const InputError& e) {
    std::cerr << "npu-doctor: error: " << e.describe() << "\n";
    return kExitBadInput;
  }
  d.before = o.before;
  d.after = o.after;
  if (!emit_report(o.output, false, [&](std::ostream& os, bool) { render_report_diff_text(os, d); }, !o.quiet))
    return kExitBadInput;
  if (!o.fail_on_regression || d.added.empty()) return kExitClean;
  std::cerr << fmt::format("npu-doctor: regression: {} new finding{}\n", d.added.size(), d.added.size() == 1 ? "" : "s");
  return kExitFindings;
}

// The analysis settings of both sides: analyze's (cli/analyze.hpp), the configuration found
// from BEFORE included (its select, ignore, torch-npu and per-file-ignores), so a finding
// `analyze` leaves out is neither fixed nor new here. False after printing the error.
bool diff_settings_or_report(const CLI::App& cmd, const DiffOptions& o, AnalysisSettings& settings) {
  AnalyzeOptions ao;
  ao.torch_npu = o.torch_npu;
  ao.config_choice = o.config_choice;
  ao.command = "diff";
  return apply_config_or_report(cmd, o.before, ao) && settings_or_report(ao, false, settings);
}

int diff_command(const CLI::App& cmd, const DiffOptions& o) {
  AnalysisSettings settings;   // first: an unknown --torch-npu or rule is refused for reports too
  if (!diff_settings_or_report(cmd, o, settings)) return kExitBadInput;
  if (!output_writable_or_report(o.output, {o.before, o.after})) return kExitBadInput;   // before two reads
  // Two JSON reports: their findings. A report beside a trace would fail as a trace with "no
  // traceEvents array": say what it is and what diff wants.
  const bool before_report = is_npu_doctor_report(o.before), after_report = is_npu_doctor_report(o.after);
  if (before_report && after_report) return diff_reports_command(o);
  if (before_report || after_report) {
    std::cerr << fmt::format("npu-doctor: error: {}: this is an npu-doctor report; diff wants two traces or "
                             "captures (or two reports: their findings are compared)\n",
                             terminal_safe(before_report ? o.before : o.after));
    return kExitBadInput;
  }
  Trace before, after;
  ReadOptions ro;
  ro.allow_truncated = o.allow_truncated;
  ro.max_events = o.max_events;
  if (!read_trace_or_report(o.before, ro, o.quiet, before) || !read_trace_or_report(o.after, ro, o.quiet, after))
    return kExitBadInput;
  // One op list for both sides, AFTER's (the run being judged): with each side's own, a GPU
  // capture of torch 2.11 against an NPU run would list fallbacks as fixed or new that only the
  // lists disagree on.
  if (!settings.torch_npu) {
    std::string why;
    settings.torch_npu = &choose_torch_npu(nullptr, after, why);
  }
  std::optional<TraceAnalysis> before_analysis, after_analysis;
  try {
    before_analysis.emplace(analyze_trace(before, settings));
    after_analysis.emplace(analyze_trace(after, settings));
  } catch (const AnalysisError& e) {
    std::cerr << "npu-doctor: error: " << terminal_safe(e.what()) << '\n';
    return kExitBadInput;
  }
  const AnalysisContext& after_ctx = after_analysis->context;
  TraceDiff d = diff_traces(*before_analysis, *after_analysis);
  bool written = emit_report(o.output, false, [&](std::ostream& os, bool color) {
    if (o.format == "json") render_diff_json(os, d);
    else if (o.format == "html")
      render_diff_html(os, d, after_ctx.index(), HtmlOptions{.min_gap_ns = after_ctx.options.min_gap_ns()});
    else render_diff_text(os, d, DiffTextOptions{o.top, color});
  }, !o.quiet);
  if (!written) return kExitBadInput;
  if (!o.fail_on_regression) return kExitClean;
  std::string why = regression(d, o.max_slowdown_pct);
  if (why.empty()) return kExitClean;
  std::cerr << "npu-doctor: regression: " << why << "\n";
  return kExitFindings;
}

}  // namespace

void add_diff_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("diff", "Compare two traces or captures of the same program (before and after a "
                                         "change, or a GPU run and an NPU run): step time, device time by "
                                         "launching op, per-op time and counts, findings fixed and new");
  auto o = std::make_shared<DiffOptions>();
  cmd->add_option("BEFORE", o->before, "trace, capture or profiler directory of the first run (or two npu-doctor "
                                      "JSON reports: their findings fixed, new and remaining)")->required();
  cmd->add_option("AFTER", o->after, "the same for the second run")->required();
  cmd->add_option("--torch-npu", o->torch_npu, "torch_npu wheel the rules use on both sides (default: as analyze chooses for "
                                               "AFTER: the torch_npu it recorded, else the newest release for its torch; "
                                               "see `npu-doctor versions`)");
  cmd->add_option("--format", o->format, "output format")
      ->check(CLI::IsMember({"text", "json", "html"}))
      ->capture_default_str();
  add_output_option(*cmd, o->output, &o->format);
  cmd->add_option("--top", o->top, "rows per op table in the text output")->check(finite_in(0, 1e6))->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "no progress on stderr");
  cmd->add_flag("--allow-truncated", o->allow_truncated, "accept traces whose last event is cut off");
  add_max_events_option(*cmd, o->max_events);
  add_config_options(*cmd, o->config_choice);
  cmd->add_flag("--fail-on-regression", o->fail_on_regression,
                "exit 1 when AFTER has findings BEFORE did not, or its step time is more than --max-slowdown slower");
  cmd->add_option("--max-slowdown", o->max_slowdown_pct, "step-time growth, in percent, that --fail-on-regression allows")
      ->check(finite_in(0, 1e6))
      ->capture_default_str();
  cmd->footer("Settings: select, ignore, torch-npu and per-file-ignores of the configuration found from BEFORE, and "
              "`# noqa: ID` comments, leave findings out as in analyze (`npu-doctor docs configuration`). "
              "Exit codes: 0 compared (and no regression with --fail-on-regression), 1 a regression with "
              "--fail-on-regression, 2 bad input or usage.");
  cmd->callback([cmd, o, &exit_code] { exit_code = diff_command(*cmd, *o); });
}

}  // namespace npud
