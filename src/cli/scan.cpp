// `npu-doctor scan PATHS...`: static scan of Python sources for what breaks or slows on an
// Ascend NPU, with exact fixes (--fix writes them, --diff shows them). Exit codes:
// 0 no finding at or above --fail-on (default error, as analyze), 1 findings at or above it, 2 usage or I/O error.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pipeline/baseline.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/inputs.hpp"
#include "cli/output.hpp"
#include "knowledge/knowledge.hpp"
#include "report/escape.hpp"
#include "report/finding_json.hpp"
#include "report/json_writer.hpp"
#include "source/source_encoding.hpp"
#include "report/sarif.hpp"
#include "report/text_style.hpp"
#include "rules/rule.hpp"
#include "rules/rule_pairs.hpp"
#include "source/fixes.hpp"
#include "source/scanner.hpp"
#include "util/atomic_file.hpp"
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

// What the scan left out, and the configuration used: said in every report format.
struct LeftOut {
  std::string config_file;
  size_t suppressed = 0, baselined = 0;
};

void render_text(std::ostream& os, const std::vector<FileResult>& results, size_t fixed, TextStyle style,
                 const LeftOut& left) {
  if (!left.config_file.empty()) os << "config: " << terminal_safe(left.config_file) << '\n';
  size_t n = 0, fixable = 0, files = 0, lines = 0;
  for (const auto& r : results) {
    if (r.status != FileStatus::Scanned) continue;
    ++files;
    lines += r.lines;
    for (const auto& f : r.findings) {
      ++n;
      fixable += f.fixable();
      // The same problem's id in `run`/`analyze` (rules/rule_pairs.hpp), after the message.
      std::string_view twin = run_rule_for(f.rule);
      os << fmt::format("{}:{}:{}: {} [{}] {}{}\n", style.bold(terminal_safe(r.path)), f.location.line, f.location.column,
                        style.bold(f.rule), style.severity(f.severity), terminal_safe(f.message),
                        twin.empty() ? std::string() : fmt::format(" (run: {})", twin));
      if (!f.fix.empty())
        os << "    " << (f.fixable() ? "fix: " : "suggestion: ") << terminal_safe(f.fix) << '\n';
    }
  }
  if (fixed) os << fmt::format("Fixed {} finding{}.\n", fixed, fixed == 1 ? "" : "s");
  std::string left_out;
  if (left.suppressed) left_out += fmt::format("; {} suppressed", left.suppressed);
  if (left.baselined) left_out += fmt::format("; {} in the baseline", left.baselined);
  os << fmt::format("Found {} finding{} ({} fixable with --fix) in {} file{}, {} lines scanned{}.\n", n,
                    n == 1 ? "" : "s", fixable, files, files == 1 ? "" : "s", lines, left_out);
}

void render_json(std::ostream& os, const std::vector<FileResult>& results, const KnowledgeVersion& version,
                 size_t fixed, const LeftOut& left) {
  JsonWriter w(os, 2);
  w.begin_object();
  tool_header(w, "scan");
  w.field("torch_npu", version.version).field("knowledge_note", version.source());
  size_t files = 0, lines = 0, n = 0, fixable = 0;
  w.key("findings").begin_array();
  for (const auto& r : results) {
    if (r.status != FileStatus::Scanned) continue;
    ++files;
    lines += r.lines;
    for (const auto& f : r.findings) {
      ++n;
      fixable += f.fixable();
      Finding shared = f;   // every command's finding shape (docs/json-schema.md), aliases included
      shared.location.file = r.path;
      write_finding(w, shared, FindingAliases::Yes);
    }
  }
  w.end_array();
  w.key("skipped").begin_array();
  for (const auto& r : results)
    if (r.status != FileStatus::Scanned) w.begin_object().field("file", r.path).field("reason", r.note).end_object();
  w.end_array();
  w.key("summary").begin_object();
  w.field("files", uint64_t(files)).field("lines", uint64_t(lines)).field("findings", uint64_t(n));
  w.field("fixable", uint64_t(fixable)).field("fixed", uint64_t(fixed));
  w.field("suppressed", uint64_t(left.suppressed)).field("baselined", uint64_t(left.baselined));
  w.key("config");
  if (left.config_file.empty()) w.null();
  else w.value(left.config_file);
  w.end_object();
  w.end_object();
  os << '\n';
}

// The scan as a SARIF log (also `--format github`): every source rule, each finding at its span.
SarifLog scan_sarif_log(const std::vector<FileResult>& results, SarifPaths paths) {
  SarifLog log;
  log.tool_version = NPUD_VERSION;
  log.paths = std::move(paths);
  for (const auto& r : source_rules())
    log.rules.push_back(sarif_rule(r.id, r.summary, r.severity));
  SourceLineCache lines(nullptr);   // the files the user named, as written now (after --fix)
  for (const auto& r : results) {
    if (r.status != FileStatus::Scanned) continue;
    for (const auto& f : r.findings) {
      SarifResult s;
      s.rule_id = f.rule;
      s.severity = f.severity;
      s.message = f.fix.empty() ? f.message : f.message + ". Fix: " + f.fix;
      s.uri = r.path;
      s.line = f.location.line;
      s.column = f.location.column;
      s.end_line = f.location.end_line;
      s.end_column = f.location.end_column;
      s.fix_description = f.fix;
      s.line_text = lines.line_text(r.path, f.location.line);
      for (const auto& e : f.edits) s.replacements.push_back({e.start, e.end - e.start, e.replacement});
      log.results.push_back(std::move(s));
    }
  }
  return log;
}

// The fixes that move a program from CUDA to the NPU (device strings, .cuda(), torch.cuda,
// the backend, .is_cuda gates) only make sense together: half of them leave a program that
// mixes devices. When --select/--ignore leaves some of a file's out, none is applied there;
// `why` says which one was left out.
bool device_fixes_split(const FileResult& r, const ScanOptions& opts, std::string& why) {
  if (!opts.filter.filters()) return false;
  auto moves_device = [](std::string_view rule) {
    return rule == "CUDA001" || rule == "CUDA002" || rule == "CUDA003" || rule == "CUDA004" || rule == "CUDA007";
  };
  bool applies = false;
  for (const auto& f : r.findings) applies = applies || (f.fixable() && moves_device(f.rule));
  if (!applies) return false;
  ScanOptions all = opts;
  all.filter = RuleFilter();
  for (const auto& f : scan_source(r.path, r.text, all).findings) {
    if (!f.fixable() || !moves_device(f.rule) || opts.filter.enabled(f.rule)) continue;
    why = fmt::format("{} at line {} is left out by --select/--ignore", f.rule, f.location.line);
    return true;
  }
  return false;
}

// Why --fix must leave a file as it is, "" when it may replace it: only a regular file the
// scan read unchanged, writable, owned by us (or we are root), with no other hard link (the
// replacement is a new file: a rename would split the links, and owner/mode would change).
std::string why_not_writable(const FileResult& r) {
  struct stat st;
  if (::lstat(r.path.c_str(), &st) != 0) return fmt::format("cannot stat it: {}", std::strerror(errno));
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link (fix the file it points to, inside the tree you scan)";
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if ((st.st_mode & 0222) == 0 || ::access(r.path.c_str(), W_OK) != 0) return "it is read-only";
  if (st.st_uid != ::geteuid() && ::geteuid() != 0) return "it belongs to another user";
  if (st.st_nlink > 1) return fmt::format("it has {} hard links, which a replacement would split", st.st_nlink);
  std::ifstream in(r.path, std::ios::binary);
  std::ostringstream now;
  now << in.rdbuf();
  if (!in.good() && !in.eof()) return "it could not be read again";
  std::string again = now.str();
  if (!decode_python_source(again).error.empty() || again != r.text)
    return "it changed while the scan ran (your edits are kept)";
  return {};
}

// What --fix and --diff leave alone: findings the configuration's per-file-ignores or the
// --baseline leave out of the report (comments' suppressions never reach here: scan_source
// drops them). docs/configuration.md says so.
struct HeldBack {
  const PathIgnores* ignores = nullptr;
  std::optional<Baseline> baseline;
  std::string baseline_path;

  // The findings of r (whose text is now `text`) that may be fixed.
  std::vector<Finding> fixable(const FileResult& r, std::string_view text,
                                   const std::vector<Finding>& findings) const {
    std::optional<Baseline> left = baseline;   // each entry holds back one finding
    SourceLineCache lines(nullptr);
    lines.use_text(r.path, text);
    std::vector<Finding> out;
    for (const Finding& f : findings) {
      if (ignores && ignores->ignores(r.path, f.rule)) continue;
      if (left && left->take(baseline_entry(f.rule, r.path, f.location.line, f.message, baseline_path, lines))) continue;
      out.push_back(f);
    }
    return out;
  }
};

// --diff writes nothing, so the findings that remain after its fixes are reported at the lines
// of the files as they are: one the first scan had is taken as it was (line, column, edits);
// one the fixes brought is put at the line its hunk replaces, without edits.
std::vector<Finding> at_original_lines(const FileResult& original, std::string_view fixed_text,
                                           std::vector<Finding> remaining) {
  const std::vector<LineOrigin> origins = line_origins(original.text, fixed_text);
  auto origin = [&](int line) {
    return line >= 1 && size_t(line) <= origins.size() ? origins[size_t(line) - 1] : LineOrigin{size_t(std::max(line, 1) - 1), true};
  };
  std::vector<bool> used(original.findings.size());
  std::vector<Finding> out;
  for (Finding& f : remaining) {
    LineOrigin o = origin(f.location.line);
    const int line = int(std::min(o.old_line + 1, size_t(std::max<size_t>(original.lines, 1))));
    size_t match = used.size();
    for (size_t k = 0; k < original.findings.size() && match == used.size(); ++k) {
      const Finding& g = original.findings[k];
      if (!used[k] && g.rule == f.rule && g.location.line == line && (!o.same || g.location.column == f.location.column)) match = k;
    }
    if (match < used.size()) {
      used[match] = true;
      out.push_back(original.findings[match]);
      continue;
    }
    f.location.end_line = std::max(line, int(origin(f.location.end_line).old_line) + 1);
    if (!o.same) f.location.column = 1, f.location.end_column = 1;
    f.location.line = line;
    f.edits.clear();
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    return a.location.line != b.location.line ? a.location.line < b.location.line : a.location.column < b.location.column;
  });
  return out;
}

// Applies each file's fixes (re-scanning until nothing more applies, at most 4 rounds) and
// either writes the files (--fix) or prints a diff (--diff). Returns the number of fixed findings.
size_t fix_files(std::vector<FileResult>& results, const ScanOptions& opts, bool write, bool& io_error,
                 const HeldBack& held) {
  size_t fixed = 0;
  for (auto& r : results) {
    if (r.status != FileStatus::Scanned || r.syntax_error) continue;
    size_t fixable_before = 0;
    for (const auto& f : r.findings) fixable_before += f.fixable();
    if (!fixable_before) continue;
    if (std::string why; device_fixes_split(r, opts, why)) {
      std::cerr << fmt::format("npu-doctor: {}: not fixed: the CUDA-to-NPU fixes go together and {}; "
                               "applying only some would leave a program that mixes devices\n",
                               terminal_safe(r.path), why);
      continue;
    }
    std::string text = r.text;
    FileResult cur = r;
    for (int round = 0; round < 4; ++round) {
      auto edits = collect_edits(held.fixable(r, text, cur.findings));
      if (edits.empty()) break;
      std::vector<TextEdit> applied;
      std::string next = apply_edits(text, edits, &applied);
      if (applied.empty() || next == text) break;
      FileResult again = scan_source(r.path, next, opts);
      if (again.syntax_error) {  // a fix must never break a file: keep what we had
        std::cerr << fmt::format("npu-doctor: internal: fixes for {} would not parse; left unchanged\n", terminal_safe(r.path));
        break;
      }
      text = std::move(next);
      cur = std::move(again);
    }
    if (text == r.text) continue;
    size_t fixable_after = 0;
    for (const auto& f : cur.findings) fixable_after += f.fixable();
    size_t fixed_here = fixable_before > fixable_after ? fixable_before - fixable_after : 0;
    if (write) {
      if (std::string why = why_not_writable(r); !why.empty()) {
        std::cerr << fmt::format("npu-doctor: {}: not fixed: {}\n", terminal_safe(r.path), why);
        continue;
      }
      std::string bytes, why_not;
      if (!encode_python_source(text, r.encoding, bytes, why_not)) {
        std::cerr << fmt::format("npu-doctor: {}: not fixed: {}\n", terminal_safe(r.path), why_not);
        continue;
      }
      try {
        // AtomicFile keeps the file's mode and owner (symlinks and hard links were refused above).
        AtomicFile out(r.path, AtomicFile::Replace::input);
        out.stream() << bytes;
        out.commit();
      } catch (const std::exception& e) {
        std::cerr << "npu-doctor: error: " << e.what() << '\n';
        io_error = true;
        continue;
      }
    } else {
      std::error_code ec;
      std::string cwd = std::filesystem::current_path(ec).string();
      std::cout << unified_diff(ec ? r.path : diff_header_path(r.path, cwd), r.text, text);
    }
    fixed += fixed_here;  // counted once written (or shown, with --diff)
    cur.text.clear();
    r.findings = write ? std::move(cur.findings) : at_original_lines(r, text, std::move(cur.findings));
  }
  return fixed;
}

// per-file-ignores of the configuration: drops those findings; returns how many.
size_t drop_path_ignored(std::vector<FileResult>& results, const PathIgnores& ignores) {
  size_t n = 0;
  for (auto& r : results)
    n += std::erase_if(r.findings, [&](const Finding& f) { return ignores.ignores(r.path, f.rule); });
  return n;
}

// --write-baseline, then --baseline (pipeline/baseline.hpp). Returns how many the baseline held.
size_t apply_scan_baseline(std::vector<FileResult>& results, const ScanArgs& a) {
  SourceLineCache lines(nullptr);   // the files the user named: read as the scan read them
  auto entry = [&](const FileResult& r, const Finding& f, const std::string& path) {
    return baseline_entry(f.rule, r.path, f.location.line, f.message, path, lines);
  };
  if (!a.write_baseline.empty()) {
    std::vector<BaselineEntry> entries;
    for (const auto& r : results)
      for (const auto& f : r.findings) entries.push_back(entry(r, f, a.write_baseline));
    write_baseline(a.write_baseline, "scan", entries);
  }
  if (a.baseline.empty()) return 0;
  Baseline b = Baseline::load(a.baseline);
  size_t n = 0;
  for (auto& r : results)
    n += std::erase_if(r.findings, [&](const Finding& f) { return b.take(entry(r, f, a.baseline)); });
  return n;
}

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
  LeftOut left;
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
    left.baselined = apply_scan_baseline(results, a);
  } catch (const std::exception& e) {
    std::cerr << "npu-doctor: error: " << terminal_safe(e.what()) << '\n';
    return kExitBadInput;
  }

  std::ostringstream report;
  if (a.format == "json") render_json(report, results, *opts.version, fixed, left);
  else if (a.format == "sarif" || a.format == "github")
    render_code_scanning(report, a.format, scan_sarif_log(results, sarif_paths(a.project_root)));
  else render_text(report, results, a.diff ? 0 : fixed,
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
