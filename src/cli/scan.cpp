// `npu-doctor scan PATHS...`: static scan of Python sources for what breaks or slows on an
// Ascend NPU, with exact fixes (--fix writes them, --diff shows them). Exit codes:
// 0 no finding at or above --fail-on (default error, as analyze), 1 findings at or above it, 2 usage or I/O error.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pipeline/scan_fixes.hpp"
#include "report/scan_report.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/inputs.hpp"
#include "cli/output.hpp"
#include "knowledge/knowledge.hpp"
#include "util/escape.hpp"
#include "source/source_encoding.hpp"
#include "rules/rule.hpp"
#include "source/scanner.hpp"
#include "util/regular_file.hpp"

namespace npud {
namespace {

struct ScanArgs {
  std::vector<std::string> paths;
  std::string torch_npu, format = "text", select, ignore, output, fail_on = "error", project_root;
  std::string baseline, write_baseline;
  ConfigChoice config_choice;
  bool fix = false, diff = false;
  unsigned threads = 0;
};

// `scan -`: the source from stdin, reported as "-" (at most what scan_source takes).
// All of stdin, stopping one read past the scanner's source limit (a stream of /dev/zero is
// refused in a moment, not held in memory). False with `error` set when it cannot be read.
bool read_stdin(std::string& text, std::string& error) {
  if (read_fd_bounded(STDIN_FILENO, kMaxSourceBytes, text, error)) return true;
  if (error.starts_with("too large"))
    error = fmt::format("more than {} MiB on stdin: no Python source is that big", kMaxSourceBytes >> 20);
  return false;
}

int run_scan(const CLI::App& cmd, ScanArgs a) {
  if (!scan_available()) {
    std::cerr << "npu-doctor: error: this build has no Python grammar: configure with libtree-sitter-dev and PyPI "
                 "reachable, or the grammar in NPUD_DEPS_CACHE (cmake/TreeSitterPython.cmake)\n";
    return kExitBadInput;
  }
  if (a.format != "text" && a.format != "json" && a.format != "sarif" && a.format != "github") {
    std::cerr << "npu-doctor: error: --format must be text, json, sarif or github\n";
    return kExitBadInput;
  }
  const bool from_stdin = std::find(a.paths.begin(), a.paths.end(), "-") != a.paths.end();
  if (from_stdin && (a.paths.size() > 1 || a.fix || a.diff)) {
    std::cerr << "npu-doctor: error: `scan -` reads one source from stdin: no other paths, --fix or --diff with it\n";
    return kExitBadInput;
  }
  Config config;
  try {
    config = load_config(a.config_choice, from_stdin ? "." : a.paths.front());
  } catch (const std::exception& e) {
    std::cerr << "npu-doctor: error: " << terminal_safe(e.what()) << '\n';
    return kExitBadInput;
  }
  auto joined = [](const std::vector<std::string>& ids) { return fmt::format("{}", fmt::join(ids, ",")); };
  const bool select_from_config = cmd.count("--select") == 0 && !config.select.empty();
  const bool ignore_from_config = cmd.count("--ignore") == 0 && !config.ignore.empty();
  if (select_from_config) a.select = joined(config.select);
  if (ignore_from_config) a.ignore = joined(config.ignore);
  if (cmd.count("--fail-on") == 0 && !config.fail_on.empty()) a.fail_on = config.fail_on;
  if (cmd.count("--torch-npu") == 0 && !config.torch_npu.empty()) a.torch_npu = config.torch_npu;
  ScanLeftOut left;
  left.config_file = config.file;

  ScanOptions opts;
  opts.version = torch_npu_version_or_report(a.torch_npu);
  if (!opts.version) return kExitBadInput;
  try {
    opts.filter = RuleFilter({a.select}, {a.ignore}, source_rule_refs(), !select_from_config, !ignore_from_config,
                             trace_rule_refs());
  } catch (const std::invalid_argument& e) {
    std::cerr << "npu-doctor: error: " << e.what() << '\n';
    return kExitBadInput;
  }
  opts.threads = a.threads;
  opts.keep_text = a.fix || a.diff;

  std::vector<std::string> notes, files;
  std::vector<FileResult> results;
  if (from_stdin) {
    std::string text, error;
    if (!read_stdin(text, error)) {
      std::cerr << "npu-doctor: error: -: " << error << "\n";
      return kExitBadInput;
    }
    SourceEncoding enc = decode_python_source(text);
    FileResult r;
    if (enc.error.empty()) r = scan_source("-", std::move(text), opts);
    else r.path = "-", r.status = FileStatus::NotUtf8, r.note = enc.error;
    results.push_back(std::move(r));
  } else {
    try {
      files = collect_python_files(a.paths, notes);
    } catch (const std::exception& e) {
      std::cerr << "npu-doctor: error: " << terminal_safe(e.what()) << '\n';
      return kExitBadInput;
    }
    for (const auto& n : notes) std::cerr << "npu-doctor: " << terminal_safe(n) << '\n';
    if (!output_writable_or_report(a.output, files) ||
        !output_writable_or_report(a.write_baseline, {}, "--write-baseline"))
      return kExitBadInput;
    results = scan_files(files, opts);
  }
  for (const auto& r : results) left.suppressed += r.suppressed;
  left.suppressed += drop_path_ignored(results, config.per_file_ignores);
  bool io_error = false;
  for (const auto& r : results) {
    if (r.status == FileStatus::Scanned) continue;
    std::cerr << fmt::format("npu-doctor: skipped {}: {}\n", terminal_safe(r.path), terminal_safe(r.note));
    // A file that cannot be read, or stdin's one source when it was not scanned: nothing was.
    if (r.status == FileStatus::ReadError || from_stdin) io_error = true;
  }

  size_t fixed = 0;
  if (a.fix || a.diff) {
    HeldBack held;
    held.ignores = &config.per_file_ignores;
    held.baseline_path = a.baseline;
    try {
      if (!a.baseline.empty()) held.baseline = Baseline::load(a.baseline);
    } catch (const std::exception& e) {
      std::cerr << "npu-doctor: error: " << terminal_safe(e.what()) << '\n';
      return kExitBadInput;
    }
    fixed = fix_files(results, opts, !a.diff, io_error, held);
    drop_path_ignored(results, config.per_file_ignores);   // a fixed file was scanned again (counted above)
  }
  try {
    left.baselined = apply_scan_baseline(results, a.baseline, a.write_baseline);
  } catch (const std::exception& e) {
    std::cerr << "npu-doctor: error: " << terminal_safe(e.what()) << '\n';
    return kExitBadInput;
  }

  std::ostringstream report;
  if (a.format == "json") render_scan_json(report, results, *opts.version, fixed, left);
  else if (a.format == "sarif" || a.format == "github")
    render_code_scanning(report, a.format, scan_sarif_log(results, sarif_paths(a.project_root)));
  else render_scan_text(report, results, a.diff ? 0 : fixed,
                   TextStyle{a.output.empty() && !a.diff && ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR")}, left);

  if (a.diff && a.output.empty()) std::cerr << report.str();   // stdout carries the diff
  else if (!emit_report(a.output, false, [&](std::ostream& os, bool) { os << report.str(); })) return kExitBadInput;

  if (io_error) return kExitBadInput;
  if (!a.write_baseline.empty()) return kExitClean;   // recording today's findings is no failure
  auto threshold = parse_severity(a.fail_on);
  for (const auto& r : results)
    for (const auto& f : r.findings)
      if (threshold && f.severity >= *threshold) return kExitFindings;
  return kExitClean;
}

}  // namespace

void add_scan_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ScanArgs>();
  auto* cmd = app.add_subcommand(
      "scan", "Static scan of Python sources for what breaks or slows on an Ascend NPU, with exact fixes");
  cmd->add_option("PATHS", args->paths,
                  "Python files or directories (skips .git, virtualenvs, site-packages); - reads one source from stdin")
      ->required();
  cmd->add_option("--torch-npu", args->torch_npu, "torch_npu wheel whose op lists to check against: 2.1.0.post8, a bare line 2.1.0, 2.15.0-dev (default: the newest release)");
  cmd->add_option("--format", args->format,
                  "text, json, sarif (SARIF 2.1.0, for GitHub code scanning) or github (GitHub Actions annotations)");
  cmd->add_flag("--fix", args->fix, "apply the exact fixes in place (none of a finding a comment suppresses, "
                "per-file-ignores drop or the --baseline holds)");
  cmd->add_flag("--diff", args->diff, "print the fixes as a unified diff and write nothing: apply it with `patch -p1` in this directory (files outside it are named from /: `patch -d / -p1`)");
  cmd->add_option("--select", args->select, "only these rule ids or prefixes, any case, comma-separated (e.g. CUDA,SYNC101)");
  cmd->add_option("--ignore", args->ignore, "skip these rule ids or prefixes, comma-separated");
  add_output_option(*cmd, args->output, &args->format);
  add_project_root_option(*cmd, args->project_root);
  cmd->add_option("--threads", args->threads, "worker threads (default: one per core)");
  cmd->add_option("--baseline", args->baseline,
                  "leave out the findings this baseline file holds (written by --write-baseline): report and fail "
                  "on new ones only");
  cmd->add_option("--write-baseline", args->write_baseline,
                  "write the findings to this baseline file (JSON) and exit 0");
  cmd->add_option("--fail-on", args->fail_on, "exit 1 when a finding has this severity or worse")
      ->check(CLI::IsMember({"info", "warning", "error", "never"}))
      ->capture_default_str();
  add_config_options(*cmd, args->config_choice);
  cmd->footer(
      "Silence one line with `# npu-doctor: ignore[CUDA002,SYNC101]` (or `# noqa: CUDA002`; a bare `# noqa` "
      "silences nothing here), a whole file with `# npu-doctor: ignore-file[CUDA002]`. Settings come from "
      "[tool.npu-doctor] in pyproject.toml or npu-doctor.toml, the nearest above the first path; options "
      "override them (`npu-doctor docs configuration`). "
      "Rule docs: `npu-doctor rules ID`. Exit codes: 0 no finding at or above --fail-on, 1 findings at or "
      "above --fail-on remain, 2 usage or I/O error.");
  cmd->callback([cmd, args, &exit_code] { exit_code = run_scan(*cmd, *args); });
}

}  // namespace npud
