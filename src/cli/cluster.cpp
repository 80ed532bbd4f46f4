#include "cli/cluster.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/inputs.hpp"
#include "cli/output.hpp"
#include "cli/progress.hpp"
#include "cluster/cluster_html.hpp"
#include "cluster/cluster_input.hpp"
#include "cluster/cluster_report.hpp"
#include "cluster/merged_summary.hpp"
#include "cluster/msprof_ranks.hpp"
#include "cluster/rank_summary.hpp"
#include "pipeline/pipeline.hpp"
#include "util/escape.hpp"
#include "report/html_report.hpp"
#include "util/input_error.hpp"
#include "util/directory.hpp"
#include "util/regular_file.hpp"
#include "util/text.hpp"

namespace npud {

namespace fs = std::filesystem;

namespace {

bool is_run_dir(const fs::path& p) {
  std::error_code ec;
  return p.filename().string().ends_with("_ascend_pt") || fs::is_directory(p / "ASCEND_PROFILER_OUTPUT", ec);
}

bool is_trace_file_name(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".json.gz");
}

// Bytes of a rank's input on disk (a run directory: all its files, for the progress line and
// the memory estimate). Folders that cannot be listed (a PROF_* folder of another user) are
// appended to `unlisted`: the report names them.
uint64_t input_bytes(const std::string& path, std::vector<UnlistedFolder>& unlisted) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return tree_bytes(path, unlisted);
  uint64_t bytes = fs::file_size(path, ec);
  return ec ? 0 : bytes;
}


uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

// One worker per CPU, fewer when the ranks' traces would not fit in half the free memory.
// `bytes`: each input's input_bytes(). A rank's trace takes about its JSON size in memory; a
// gzip file inflates ~10x.
unsigned default_jobs(const std::vector<std::string>& inputs, const std::vector<uint64_t>& bytes) {
  unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  uint64_t largest = 1;
  for (size_t i = 0; i < inputs.size(); ++i)
    largest = std::max(largest, inputs[i].ends_with(".gz") ? bytes[i] * 10 : bytes[i]);
  uint64_t avail = available_memory();
  unsigned by_memory = avail ? unsigned(std::clamp<uint64_t>(avail / 2 / largest, 1, 4096)) : cpus;
  return std::min({cpus, by_memory, unsigned(inputs.size())});
}

// A rank profile read and analysed as `analyze RANK` would (the same pipeline: knowledge
// version, rules, suppression comments, per-file-ignores), or a summary written elsewhere
// (`--format summary`, a rank's or a merge's) read as it is: a directory may mix them. Folded
// here, on the worker, so a rank's collectives are let go before the next rank is read.
ClusterInput analyze_rank(const std::string& path, const AnalyzeOptions& o, const AnalysisSettings& settings) {
  ClusterInput in;
  std::error_code ec;
  SummaryKind kind = fs::is_regular_file(path, ec) ? summary_kind_of(path) : SummaryKind::None;
  if (kind == SummaryKind::Merged) {
    read_merged_summary(path, in);
    return in;
  }
  if (kind == SummaryKind::Rank) {
    in.add(read_rank_summary(path));
    return in;
  }
  ReadOptions ro;
  ro.allow_truncated = o.allow_truncated;
  ro.max_events = o.max_events;
  Trace trace = read_trace(path, ro);
  TraceAnalysis a = analyze_trace(trace, settings);
  in.add(summarize_rank(trace, std::move(a.report.findings), a.version.version));
  return in;
}

// Reads and summarises every input on `jobs` threads (`bytes`: each input's input_bytes(), for
// the progress line). A rank that cannot be read is reported on stderr and left out; `failed`
// counts them.
ClusterInput summarize_ranks(const std::vector<std::string>& inputs, const std::vector<uint64_t>& bytes,
                             const AnalyzeOptions& o, const AnalysisSettings& settings, unsigned jobs, size_t& failed) {
  std::vector<std::optional<ClusterInput>> slots(inputs.size());
  std::vector<std::string> errors(inputs.size());
  std::atomic<size_t> next{0};
  std::mutex progress_mutex;
  uint64_t total = 0, done = 0;
  for (uint64_t b : bytes) total += b;
  Progress progress(fmt::format("analysing {} ranks", inputs.size()), !o.quiet);
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < inputs.size();) {
      try {
        slots[i] = analyze_rank(inputs[i], o, settings);
      } catch (const InputError& e) {
        errors[i] = e.describe();
      } catch (const std::exception& e) {
        errors[i] = fmt::format("{}: {}", inputs[i], e.what());
      }
      std::lock_guard lock(progress_mutex);
      progress.update(done += bytes[i], total);
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  progress.finish();

  ClusterInput out;
  failed = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (slots[i]) {
      out.add(std::move(*slots[i]));
      continue;
    }
    ++failed;
    std::cerr << "npu-doctor: error: " << terminal_safe(errors[i]) << "\n";
    if (o.format == "summary")   // the merged summary carries the lost rank to the merge above it
      out.add(failed_rank(rank_in_path(inputs[i]), inputs[i], errors[i]));
  }
  return out;
}

// Ranks whose summary run failed (a failure record, kept through merged summaries) are errors
// that name them, never ranks "without a profile"; --expect-ranks names each expected rank no
// summary came for. Returns how many of both there are.
size_t report_failed_and_missing(const ClusterInput& in, int64_t expect_ranks, std::vector<std::string>& notes) {
  size_t bad = 0;
  std::set<int64_t> seen;
  for (const MergedRank& m : in.ranks) {
    const RankSummary& s = m.summary;
    seen.insert(s.rank);
    if (s.failed.empty()) continue;
    ++bad;
    std::string who = s.rank >= 0 ? fmt::format("rank {} ({})", s.rank, s.source) : s.source;
    std::cerr << fmt::format("npu-doctor: error: {}: its summary run failed: {}\n", terminal_safe(who), terminal_safe(s.failed));
    notes.push_back(fmt::format("{}: its summary run failed ({})", who, s.failed));
  }
  std::vector<int64_t> missing;
  for (int64_t r = 0; r < expect_ranks; ++r)
    if (!seen.contains(r)) missing.push_back(r);
  if (!missing.empty()) {
    ++bad;
    notes.push_back(fmt::format("{} of the {} expected ranks have no summary", missing.size(), expect_ranks));
    std::cerr << fmt::format("npu-doctor: error: --expect-ranks {}: no summary for {} rank{} ({}{})\n", expect_ranks,
                             missing.size(), missing.size() == 1 ? "" : "s",
                             fmt::join(missing.begin(), missing.begin() + std::ptrdiff_t(std::min<size_t>(missing.size(), 32)), ", "),
                             missing.size() > 32 ? ", ..." : "");
  }
  return bad;
}

// The cluster view of the ranks `in` (read from `source`), with `notes`, written as `o` asks
// (analyze's or merge's options; `--format summary`: the merged summary, for a later merge);
// its exit code. `unread` inputs (each one `noun`) could not be read: a note, and exit code 2
// whatever was found; so is a rank whose summary run failed, or one --expect-ranks misses.
// -q where the command has it (merge has none).
template <typename Options>
bool quiet(const Options& o) {
  if constexpr (requires { o.quiet; }) return o.quiet;
  else return false;
}

template <typename Options>
int report_cluster(ClusterInput in, const std::string& source, std::vector<std::string> notes, size_t unread,
                   std::string_view noun, int64_t expect_ranks, const Options& o, const std::vector<const Rule*>* rules) {
  if (in.ranks.empty()) return kExitBadInput;
  std::vector<std::string> failed_notes;
  size_t bad = unread + report_failed_and_missing(in, expect_ranks, failed_notes);
  if (o.format == "summary") {   // what this part of the job read says so inside, for the merge above it
    in.notes.insert(in.notes.end(), notes.begin(), notes.end());
    if (unread)
      in.notes.push_back(fmt::format("{}: {} {}{} could not be read", source, unread, noun, unread == 1 ? "" : "s"));
    bool written = emit_report(o.output, false, [&](std::ostream& os, bool) { write_merged_summary(os, in, source); },
                               !quiet(o));
    return !written || bad ? kExitBadInput : kExitClean;
  }
  ClusterReport report = build_cluster_report(in, source, rules);
  report.notes.insert(report.notes.end(), notes.begin(), notes.end());
  report.notes.insert(report.notes.end(), failed_notes.begin(), failed_notes.end());
  if (unread)
    report.notes.push_back(fmt::format("{} {}{} could not be read (errors above)", unread, noun, unread == 1 ? "" : "s"));
  bool written = emit_report(o.output, o.format == "text", [&](std::ostream& os, bool color) {
    if (o.format == "json") render_cluster_json(os, report);
    else if (o.format == "html") render_cluster_html(os, report);
    else if (o.format == "sarif" || o.format == "github")
      render_code_scanning(os, o.format, cluster_sarif_log(report, sarif_paths(o.project_root)));
    else render_cluster_text(os, report, color, o.verbose);
  }, !quiet(o));
  if (!written) return kExitBadInput;
  int code = exit_code_for(worst_severity(report), o.fail_on);
  return bad ? kExitBadInput : code;
}

// What the cluster view cannot do, said before any rank is read: a format it has no renderer
// for, and a baseline (one file of one trace's findings: the ranks would each read it, or race
// to write it, and the report would not say which findings it left out).
bool cluster_options_or_report(const AnalyzeOptions& o) {
  if (!o.baseline.empty() || !o.write_baseline.empty()) {
    std::cerr << fmt::format("npu-doctor: error: --{} takes one trace or capture; the cluster view of several ranks has "
                             "none (analyze one rank's profile for its baseline: `npu-doctor docs configuration`)\n",
                             o.baseline.empty() ? "write-baseline" : "baseline");
    return false;
  }
  for (std::string_view f : {"text", "json", "html", "sarif", "github", "summary"})
    if (o.format == f) return true;
  std::cerr << fmt::format("npu-doctor: error: --format {} is not available for a cluster (text, json, html, sarif, github "
                           "or summary); for one rank, analyze its profile\n",
                           o.format);
  return false;
}

}  // namespace

std::vector<std::string> rank_inputs_in(const std::string& dir, std::vector<std::string>* skipped) {
  std::vector<std::string> out;
  std::error_code ec;
  std::vector<fs::directory_entry> entries = directory_entries(dir, ec);
  if (ec && skipped) skipped->push_back(fmt::format("{}: listing stopped early ({}): ranks after that point are not in the report", dir, ec.message()));
  for (const auto& e : entries) {
    std::error_code entry_ec;
    const std::string name = e.path().filename().string();
    if (!e.is_directory(entry_ec)) {
      if (is_trace_file_name(name)) out.push_back(e.path().string());
    } else if (is_run_dir(e.path())) {
      out.push_back(e.path().string());
    } else if (is_trace_file_name(name) && skipped) {
      skipped->push_back(fmt::format("{} is a directory, not a rank profile: skipped", e.path().string()));
    }
  }
  std::sort(out.begin(), out.end());
  if (skipped) std::sort(skipped->begin(), skipped->end());
  return out;
}

bool is_cluster_input(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec) || is_run_dir(path) || fs::exists(fs::path(path) / "trace_view.json", ec)) return false;
  return !find_msprof_cluster_output(path).empty() || rank_inputs_in(path).size() >= 2;
}

namespace {

// The rank profiles `inputs` read and summarised on worker threads, then the cluster view of
// them (`label`: the directory or run it came from). `notes`: what finding the inputs said.
int cluster_of_inputs(const std::vector<std::string>& inputs, std::vector<std::string> notes, const std::string& label,
                      const AnalyzeOptions& o, const AnalysisSettings& settings) {
  std::vector<uint64_t> bytes;
  for (const auto& p : inputs) {
    std::vector<UnlistedFolder> unlisted;
    bytes.push_back(input_bytes(p, unlisted));
    // The rank's own folder unreadable: its read fails and says so; a folder inside it is
    // one the reader does not need (it reads ASCEND_PROFILER_OUTPUT), or its read fails too.
    for (const auto& u : unlisted)
      if (u.path != fs::path(p))
        notes.push_back(fmt::format("{} could not be listed ({}): its size is not counted and the rank was "
                                    "read without it", u.path.string(), u.reason));
  }
  unsigned jobs = o.jobs ? std::min<unsigned>(o.jobs, unsigned(inputs.size())) : default_jobs(inputs, bytes);
  if (!o.quiet && ::isatty(STDERR_FILENO))
    std::cerr << fmt::format("npu-doctor: {} rank profiles in {}, {} at a time\n", inputs.size(), label, jobs);
  size_t failed = 0;
  ClusterInput in = summarize_ranks(inputs, bytes, o, settings, jobs, failed);
  return report_cluster(std::move(in), label, std::move(notes), failed, "rank profile", 0, o, &settings.rules);
}

}  // namespace

int analyze_cluster(const std::string& dir, const AnalyzeOptions& o) {
  AnalysisSettings settings;
  if (!cluster_options_or_report(o) || !settings_or_report(o, false, settings)) return kExitBadInput;
  if (!output_writable_or_report(o.output)) return kExitBadInput;   // before reading every rank
  if (std::string out = find_msprof_cluster_output(dir); !out.empty()) {
    ClusterInput in;
    try {
      for (RankSummary& s : read_msprof_cluster(out)) in.add(std::move(s));
    } catch (const InputError& e) {
      std::cerr << "npu-doctor: error: " << terminal_safe(e.describe()) << "\n";
      return kExitBadInput;
    }
    return report_cluster(std::move(in), dir, {}, 0, "", 0, o, &settings.rules);
  }
  std::vector<std::string> listing_notes;  // folders skipped while finding and sizing the ranks
  std::vector<std::string> inputs = rank_inputs_in(dir, &listing_notes);
  return cluster_of_inputs(inputs, std::move(listing_notes), dir, o, settings);
}

int analyze_rank_captures(const std::vector<std::string>& captures, const std::string& label,
                          std::vector<std::string> notes, const AnalyzeOptions& o) {
  AnalysisSettings settings;
  if (!cluster_options_or_report(o) || !settings_or_report(o, false, settings)) return kExitBadInput;
  return cluster_of_inputs(captures, std::move(notes), label, o, settings);
}

namespace {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string from;            // --from LIST: more inputs, one per line ("-": stdin)
  int64_t expect_ranks = 0;    // --expect-ranks N: ranks 0..N-1 must each have a summary
  std::string format = "text";
  std::string output;
  std::string project_root;   // --project-root (sarif, github)
  std::string fail_on = "error";
  bool verbose = false;
};

constexpr uint64_t kMaxInputListBytes = uint64_t(256) << 20;

// --from LIST: the paths in LIST, one per line (blank lines skipped), "-" reading stdin: a
// launcher's 20,000 summary paths never meet the command line's length limit.
bool read_input_list(const std::string& list, std::vector<std::string>& out) {
  std::string text, error;
  bool ok = list == "-" ? read_fd_bounded(STDIN_FILENO, kMaxInputListBytes, text, error)
                        : read_regular_file(list, kMaxInputListBytes, text, error);
  if (!ok) {
    std::cerr << fmt::format("npu-doctor: error: --from {}: {}\n", terminal_safe(list), error);
    return false;
  }
  for (size_t at = 0; at < text.size();) {
    size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = trim(std::string_view(text).substr(at, end - at));
    if (!line.empty()) out.emplace_back(line);
    at = end + 1;
  }
  return true;
}

int merge_command(const MergeOptions& o) {
  if (!output_writable_or_report(o.output)) return kExitBadInput;   // before reading the summaries
  std::vector<std::string> inputs = o.inputs;
  if (!o.from.empty() && !read_input_list(o.from, inputs)) return kExitBadInput;
  if (inputs.empty()) {
    std::cerr << "npu-doctor: error: merge: no input (name summaries, folders of them, or --from LIST)\n";
    return kExitBadInput;
  }
  ClusterInput folded;
  size_t bad = 0;
  auto read_one = [&](const std::string& path) {
    try {
      if (summary_kind_of(path) == SummaryKind::Merged) read_merged_summary(path, folded);
      else folded.add(read_rank_summary(path));
    } catch (const InputError& e) {
      ++bad;
      std::cerr << "npu-doctor: error: " << terminal_safe(e.describe()) << "\n";
      // A merged summary of this part says which input it lost, and whose rank that was.
      if (o.format == "summary") folded.add(failed_rank(rank_in_file_name(path), path, e.describe()));
    }
  };
  std::string source;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (!fs::exists(in, ec)) {
      ++bad;
      std::cerr << fmt::format("npu-doctor: error: {}: no such file or directory\n", terminal_safe(in));
      continue;
    }
    source = source.empty() ? in : fmt::format("{} inputs", inputs.size());
    if (!fs::is_directory(in, ec)) {
      read_one(in);
      continue;
    }
    if (std::string out = find_msprof_cluster_output(in); !out.empty()) {
      try {
        for (auto& s : read_msprof_cluster(out)) folded.add(std::move(s));
      } catch (const InputError& e) {
        ++bad;
        std::cerr << "npu-doctor: error: " << terminal_safe(e.describe()) << "\n";
      }
      continue;
    }
    std::vector<std::string> files;
    for (const auto& e : directory_entries(in, ec)) {
      std::error_code entry_ec;
      std::string path = e.path().string(), name = e.path().filename().string();
      if (!e.is_regular_file(entry_ec) || !(name.ends_with(".json") || name.ends_with(".json.gz"))) continue;
      if (is_rank_summary_file(path)) {
        files.push_back(path);
      } else if (name.starts_with("rank")) {   // named as a summary, yet none: that rank is lost
        ++bad;
        std::cerr << fmt::format("npu-doctor: error: {}: not a rank summary (no \"kind\": \"{}\" in its first "
                                 "bytes); its rank is left out\n", terminal_safe(path), kRankSummaryKind);
      } else {
        std::cerr << fmt::format("npu-doctor: note: skipped {}: not a rank summary\n", terminal_safe(path));
      }
    }
    if (ec) {
      ++bad;
      std::cerr << fmt::format("npu-doctor: error: {}: cannot list it completely: {}\n", terminal_safe(in), ec.message());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      ++bad;
      std::cerr << fmt::format("npu-doctor: error: {}: no rank summaries in it (write them with `npu-doctor analyze "
                               "RANK_PROFILE --format summary -o rankN.json`)\n", terminal_safe(in));
    }
    for (const auto& f : files) read_one(f);
  }
  // summaries: their ranks chose the rules
  return report_cluster(std::move(folded), source, {}, bad, "input", o.expect_ranks, o, nullptr);
}

}  // namespace

void add_merge_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "merge", "Combine per-rank summaries (`analyze RANK --format summary`) into the cluster view: step breakdown per "
               "rank, slow ranks, communication wait, findings only some ranks have");
  auto o = std::make_shared<MergeOptions>();
  cmd->add_option("INPUT", o->inputs, "rank summary files (.json or .json.gz), merged summaries (merge --format "
                                      "summary), directories of them, or an msprof-analyze cluster_analysis_output "
                                      "directory");
  cmd->add_option("--from", o->from, "more inputs, one path per line, from this file (- reads stdin): for "
                                     "more summaries than a command line holds");
  cmd->add_option("--expect-ranks", o->expect_ranks, "ranks 0..N-1 are expected: each one without a summary is an "
                                                     "error (exit 2), as is a rank whose summary run failed")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  cmd->add_option("--format", o->format, "report format (sarif: the ranks' findings, for GitHub code scanning; github: "
                  "the same as GitHub Actions annotations; summary: a merged summary that merge reads again, for a "
                  "reduce in levels)")
      ->check(CLI::IsMember({"text", "json", "html", "sarif", "github", "summary"}))
      ->capture_default_str();
  add_output_option(*cmd, o->output, &o->format);
  add_project_root_option(*cmd, o->project_root);
  cmd->add_option("--fail-on", o->fail_on, "exit 1 when a slow rank or finding has this severity or worse")
      ->check(CLI::IsMember({"info", "warning", "error", "never"}))
      ->capture_default_str();
  cmd->add_flag("-v,--verbose", o->verbose, "every rank and every finding");
  cmd->footer("Exit codes: 0 nothing at or above --fail-on, 1 something is, 2 an input could not be read, a "
              "rank's summary run failed, or an expected rank has no summary.");
  cmd->callback([o, &exit_code] { exit_code = merge_command(*o); });
}

}  // namespace npud
