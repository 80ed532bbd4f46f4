#include "cli/analyze.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/cluster.hpp"
#include "cli/config.hpp"
#include "cli/commands.hpp"
#include "cluster/rank_summary.hpp"
#include "cli/inputs.hpp"
#include "cli/output.hpp"
#include "cli/stdin_copy.hpp"
#include "model/trace.hpp"
#include "pipeline/pipeline.hpp"
#include "util/escape.hpp"
#include "report/html_report.hpp"
#include "report/relative_paths.hpp"
#include "report/render.hpp"
#include "report/sarif.hpp"
#include "source/source_snippet.hpp"
#include "model/rule_filter.hpp"
#include "source/source_rules.hpp"
#include "util/terminal.hpp"

namespace npud {

void add_report_options(CLI::App& cmd, AnalyzeOptions& o) {
  cmd.add_option("--torch-npu", o.torch_npu,
                 "torch_npu wheel whose op list predicts CPU fallbacks: 2.1.0.post8, a bare line 2.1.0, 2.15.0-dev "
                 "(default: the torch_npu the trace recorded, else the newest release for its torch; "
                 "see `npu-doctor versions`)");
  cmd.add_option("--format", o.format, "report format (sarif: for GitHub code scanning; github: GitHub Actions "
                 "annotations, one line per finding; summary: the compact per-rank JSON that `npu-doctor merge` "
                 "combines, `npu-doctor docs cluster`)")
      ->check(CLI::IsMember({"text", "json", "html", "sarif", "github", "summary"}))
      ->capture_default_str();
  add_output_option(cmd, o.output, &o.format);
  add_project_root_option(cmd, o.project_root);
  cmd.add_option("--fail-on", o.fail_on, "exit 1 when a finding has this severity or worse")
      ->check(CLI::IsMember({"info", "warning", "error", "never"}))
      ->capture_default_str();
  // One value per occurrence (repeatable), as in scan: `--select sync trace.json` must not take
  // the trace as a second rule list.
  cmd.add_option("--select", o.select,
                 "only these rule ids, id prefixes or names, any case (comma-separated, e.g. SYNC,IDLE001,host-device-sync; repeatable)")
      ->allow_extra_args(false)
      ->delimiter(',');
  cmd.add_option("--ignore", o.ignore, "skip these rule ids, id prefixes or names (comma-separated; repeatable)")
      ->allow_extra_args(false)
      ->delimiter(',');
  cmd.add_option("--top", o.rule_options.top_n, "how many hot ops HOT001 lists")
      ->check(finite_in(0, 1e6))
      ->capture_default_str();
  cmd.add_option("--min-gap-us", o.rule_options.min_gap_us, "device idle gaps shorter than this are ignored")
      ->check(finite_in(0, 1e12))
      ->capture_default_str();
  cmd.add_option("--baseline", o.baseline,
                 "leave out the findings this baseline file holds (written by --write-baseline): report and fail "
                 "on new ones only (`npu-doctor docs configuration`)");
  cmd.add_option("--write-baseline", o.write_baseline,
                 "write the findings to this baseline file (JSON) and exit 0; later runs take it with --baseline");
  add_config_options(cmd, o.config_choice);
  cmd.add_flag("-q,--quiet", o.quiet, "no progress and no reader warnings on stderr");
  cmd.add_flag("-v,--verbose", o.verbose, "every finding and note (default: the worst 5 per rule)");
}

void add_analyze_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("analyze", "Analyse a profile: Kineto/torch.profiler JSON (.json, .json.gz), "
                                            "a torch_npu profiler directory, or an npu-doctor capture; a directory "
                                            "of rank profiles gives the cluster view");
  auto opts = std::make_shared<AnalyzeOptions>();
  auto path = std::make_shared<std::string>();
  cmd->add_option("PATH", *path,
                  "trace file or profiler output directory (- reads one trace or capture from stdin); a directory of rank profiles (Kineto rank files, "
                  "*_ascend_pt runs) or msprof-analyze's cluster_analysis_output gives the cluster view")
      ->required();
  add_report_options(*cmd, *opts);
  cmd->add_flag("--allow-truncated", opts->allow_truncated,
                "accept a trace whose last event is cut off (a killed run); a warning says what was dropped");
  add_max_events_option(*cmd, opts->max_events);
  cmd->add_option("-j,--jobs", opts->jobs,
                  "cluster view: ranks read at once (default: one per CPU); memory grows with each, by about one "
                  "rank's trace")
      ->check(CLI::Range(1, 4096));
  cmd->footer(
      "Settings: [tool.npu-doctor] in pyproject.toml or npu-doctor.toml, the nearest above PATH; options override "
      "them. `# npu-doctor: ignore[ID]` or `# noqa: ID` on a finding's source line silences it "
      "(`npu-doctor docs configuration`). "
      "Exit codes: 0 no finding at or above --fail-on, 1 findings at or above --fail-on, 2 bad input or usage.");
  cmd->callback([cmd, opts, path, &exit_code] {
    if (!apply_config_or_report(*cmd, *path, *opts)) {
      exit_code = kExitBadInput;
      return;
    }
    if (*path == "-") {   // stdin: one trace or capture (docs/configuration.md)
      try {
        StdinCopy copy;
        opts->source_name = "-";
        exit_code = analyze_trace_file(copy.path(), *opts);
      } catch (const std::exception& e) {
        std::cerr << "npu-doctor: error: " << e.what() << '\n';
        exit_code = kExitBadInput;
      }
      return;
    }
    exit_code = is_cluster_input(*path) ? analyze_cluster(*path, *opts) : analyze_trace_file(*path, *opts);
  });
}

namespace {

// The text report's width: the terminal's for a report on stdout, the fixed one in a file.
size_t text_width(const std::string& output) {
  return output.empty() ? terminal_width(STDOUT_FILENO, TextOptions::kDefaultTextWidth) : TextOptions::kDefaultTextWidth;
}

RuleFilter rule_filter(const AnalyzeOptions& o) {
  return RuleFilter(o.select, o.ignore, trace_rule_refs(), !o.select_from_config, !o.ignore_from_config,
                    source_rule_refs());
}

}  // namespace

std::vector<const Rule*> select_rules(const AnalyzeOptions& o) {
  const RuleFilter filter = rule_filter(o);
  std::vector<const Rule*> out;
  for (const Rule* r : trace_rules()) {
    // CAPTURE001 says the input is incomplete: every report of a capture has it, whatever is selected.
    if (r->id() == "CAPTURE001" || filter.enabled(r->id())) out.push_back(r);
  }
  return out;
}

int exit_code_for(std::optional<Severity> worst, std::string_view fail_on) {
  auto threshold = parse_severity(fail_on);
  if (!threshold || !worst) return kExitClean;  // "never", or nothing found
  return *worst >= *threshold ? kExitFindings : kExitClean;
}

namespace {

void print_warnings(const Trace& trace) {
  constexpr size_t kShown = 5;
  for (size_t i = 0; i < trace.warnings.size() && i < kShown; ++i) {
    const auto& w = trace.warnings[i];
    if (w.offset)
      std::cerr << fmt::format("npu-doctor: warning: {}: byte {}: {}\n", terminal_safe(trace.source), w.offset,
                               terminal_safe(w.message));
    else std::cerr << fmt::format("npu-doctor: warning: {}: {}\n", terminal_safe(trace.source), terminal_safe(w.message));
  }
  if (trace.warnings.size() > kShown)
    std::cerr << fmt::format("npu-doctor: warning: {} more warnings (see --format json)\n",
                             trace.warnings.size() - kShown);
}

}  // namespace

bool settings_or_report(const AnalyzeOptions& o, bool with_baseline, AnalysisSettings& s) {
  s = AnalysisSettings{};
  if (!o.torch_npu.empty() && !(s.torch_npu = torch_npu_version_or_report(o.torch_npu))) return false;
  try {
    s.rules = select_rules(o);
  } catch (const std::invalid_argument& e) {
    std::cerr << "npu-doctor: error: " << e.what() << "\n";
    return false;
  }
  s.rule_options = o.rule_options;
  s.command = o.command;
  s.path_ignores = o.path_ignores;
  if (with_baseline) {
    s.baseline = o.baseline;
    s.write_baseline = o.write_baseline;
  }
  s.config_file = o.config_file;
  s.notes = o.report_notes;
  return true;
}

int analyze_trace_file(const std::string& path, const AnalyzeOptions& o) {
  AnalysisSettings settings;
  if (!settings_or_report(o, true, settings)) return kExitBadInput;

  // before a long read; neither output may replace the input
  if (!output_writable_or_report(o.output, {path}) ||
      !output_writable_or_report(o.write_baseline, {}, "--write-baseline"))
    return kExitBadInput;

  Trace trace;
  ReadOptions ro;
  ro.allow_truncated = o.allow_truncated;
  ro.max_events = o.max_events;
  if (std::string error; !read_trace_or_report(path, ro, o.quiet, trace, o.source_name, &error)) {
    // A map step's output for merge: a record that this rank failed, not a silent gap.
    if (o.format == "summary" && !o.output.empty()) {
      int64_t rank = rank_in_file_name(o.output);
      emit_report(o.output, false, [&](std::ostream& os, bool) {
        write_failed_rank_summary(os, rank >= 0 ? rank : rank_in_file_name(path), path, error);
      }, false);
    }
    return kExitBadInput;
  }
  if (!o.source_name.empty()) trace.source = o.source_name;
  if (!o.quiet) print_warnings(trace);
  std::optional<TraceAnalysis> analysis;
  try {
    analysis.emplace(analyze_trace(trace, settings));
  } catch (const AnalysisError& e) {
    std::cerr << "npu-doctor: error: " << terminal_safe(e.what()) << '\n';
    return kExitBadInput;
  }
  Report& report = analysis->report;
  const AnalysisContext& ctx = analysis->context;

  if (o.text_paths_relative && o.format == "text") {
    std::error_code ec;
    std::filesystem::path cwd = std::filesystem::current_path(ec);
    if (!ec) shorten_paths_under(report, cwd.string());
  }
  bool written = emit_report(o.output, o.format == "text", [&](std::ostream& os, bool color) {
    if (o.format == "json") render_json(os, report);
    else if (o.format == "html") render_html(os, report, ctx.index(), HtmlOptions{.min_gap_ns = ctx.options.min_gap_ns()});
    else if (o.format == "sarif" || o.format == "github")
      render_code_scanning(os, o.format, sarif_from_report(report, analysis->source_policy, sarif_paths(o.project_root)));
    else if (o.format == "summary") write_rank_summary(os, summarize_rank(trace, report.findings, analysis->version.version));
    else render_text(os, report, TextOptions{color, o.verbose, rule_filter(o).selected("HOT001"), text_width(o.output)});
  }, !o.quiet);
  if (!written) return kExitBadInput;
  // A capture that stopped early (shim error, exception, kill) already says so first (CAPTURE001),
  // with the steps it holds: "the program never ended a step" would blame the program.
  const bool stopped_early = trace.caps.end_status &&
                             (!trace.capture.error.empty() || !trace.capture.ended || trace.capture.reason == "exception");
  if (!o.require_steps.empty() && trace.steps.empty() && !stopped_early) {
    std::string first = o.require_steps.substr(0, o.require_steps.find(':'));
    std::cerr << fmt::format(
        "npu-doctor: error: no step was recorded (--steps {}): the program {}. A step ends at each "
        "optimizer.step() (torch.optim) or, in a program without an optimizer, at each backward(); a program "
        "that does neither (inference, a custom loop) marks the end of each iteration with npu_doctor.step() "
        "(`npu-doctor docs capture`)\n",
        o.require_steps,
        // a program that failed first (a config error, a bad argument) is said to have failed:
        // its own error is above this line, and no note about steps helps it
        o.program_exit_code != 0 ? fmt::format("exited with status {} before it ended a step (its own output above "
                                               "says why)", o.program_exit_code)
        : o.require_steps == "all" || first.empty() ? "never ended a step"
                                                    : fmt::format("ended before step {} or never ended a step", first));
    return kExitBadInput;
  }
  if (!o.write_baseline.empty()) return kExitClean;   // recording today's findings is no failure
  std::optional<Severity> worst;
  for (const auto& f : report.findings) worst = std::max(worst.value_or(f.severity), f.severity);
  return exit_code_for(worst, o.fail_on);
}

}  // namespace npud
