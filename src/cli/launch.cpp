// See launch.hpp. Checking the request, running the program with the capture shim
// (launch_shim.hpp: its folder; launch_child.hpp: the child and its signals;
// launch_captures.hpp: the capture folder) and analysing what it left; the options are in
// launch_options.cpp. The child runs unchanged: its stdin/stdout/stderr pass through, and
// SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to npu-doctor are forwarded to it.
#include "cli/launch.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pipeline/baseline.hpp"
#include "cli/cluster.hpp"
#include "cli/commands.hpp"
#include "cli/inputs.hpp"
#include "cli/launch_captures.hpp"
#include "cli/launch_child.hpp"
#include "cli/launch_shim.hpp"
#include "cli/output.hpp"
#include "numeric/dump.hpp"
#include "util/atomic_file.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

// The source tree's python/ of a binary run from its build folder: CMakeLists.txt defines
// NPUD_SOURCE_PYTHON_DIR for this file alone, and never for a wheel (find_python_dir).
#ifdef NPUD_SOURCE_PYTHON_DIR
constexpr const char* kSourcePythonDir = NPUD_SOURCE_PYTHON_DIR;
#else
constexpr const char* kSourcePythonDir = nullptr;
#endif

}  // namespace

bool valid_steps(const std::string& s) {
  if (s == "all") return true;
  auto parse = [](std::string_view v, long& out) {
    if (v.empty()) return false;
    auto r = std::from_chars(v.data(), v.data() + v.size(), out);
    return r.ec == std::errc() && r.ptr == v.data() + v.size() && out >= 0;
  };
  auto colon = s.find(':');
  long a = 0, b = 0;
  if (colon == std::string::npos) return parse(s, a);
  std::string_view first(s.data(), colon), last(s.data() + colon + 1, s.size() - colon - 1);
  if (!parse(first, a)) return false;
  if (last.empty()) return true;
  return parse(last, b) && b >= a;
}


int launch_with_shim(const LaunchRequest& ro, Launched& out) {
  if (ro.program.empty()) {
    std::cerr << fmt::format("npu-doctor: error: {0}: no program given (usage: npu-doctor {0} [OPTIONS] -- python3 "
                             "train.py ...)\n", ro.command_name);
    return kExitBadInput;
  }
  if (!valid_steps(ro.steps)) {
    std::cerr << fmt::format("npu-doctor: error: --steps '{}': expected A:B with 0 <= A <= B (e.g. 1:3)\n", ro.steps);
    return kExitBadInput;
  }
  if (std::string flag = python_flag_hiding_the_shim(ro.program); !flag.empty()) {
    std::cerr << fmt::format("npu-doctor: error: {0}: `{1} {2}` ignores PYTHONPATH, through which the capture shim "
                             "loads: drop {2} for the {0}\n", ro.command_name, ro.program[0], flag);
    return kExitBadInput;
  }
  std::string tried;
  std::string python_dir = find_python_dir(tried, kSourcePythonDir);
  if (python_dir.empty()) {
    std::cerr << fmt::format("npu-doctor: error: cannot find the capture shim ({}) in: {} (set NPUD_PYTHON_DIR to "
                             "the directory that holds the npu_doctor package)\n", kBootstrap, tried);
    return kExitBadInput;
  }

  ShimLink shim_link;
  if (python_dir.find(':') != std::string::npos) {
    python_dir = shim_link.make(python_dir);
    if (python_dir.empty()) return kExitBadInput;
  }

  std::error_code ec;
  fs::create_directories(ro.out_dir, ec);
  if (ec) {
    std::cerr << fmt::format("npu-doctor: error: cannot create {}: {}\n", ro.out_dir, ec.message());
    return kExitBadInput;
  }
  if (!lock_capture_dir(ro.out_dir)) return kExitBadInput;
  fs::path capture = fs::absolute(fs::path(ro.out_dir) / kCaptureName);
  fs::remove(capture, ec);   // a stale capture must not pass for this run's
  for (const std::string& stale : other_process_captures(ro.out_dir)) fs::remove(stale, ec);
  for (const std::string& stale : rank_captures(ro.out_dir)) fs::remove(stale, ec);

  // Only the bootstrap folder goes on PYTHONPATH: it loads npu_doctor from python_dir by
  // location, so a wheel's whole site-packages never lands in front of the program's path.
  std::string pythonpath = (fs::path(python_dir) / "npu_doctor" / "_bootstrap").string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
  std::vector<std::string> env = {"PYTHONPATH=" + pythonpath, "NPUD_CAPTURE=" + capture.string(),
                                  "NPUD_STEPS=" + ro.steps};
  env.insert(env.end(), ro.extra_env.begin(), ro.extra_env.end());
  if (!ro.dump.empty()) env.push_back("NPUD_DUMP=" + ro.dump);   // tensors go to CAPTURE_DIR/dump/
  // A person at a terminal hears from the shim when recording starts and when it is done (and
  // stopping the program loses nothing): one line each, the first process only (issue 40).
  if (!ro.quiet && ::isatty(STDERR_FILENO)) env.push_back("NPUD_STATUS=1");

  ChildResult child = run_child(ro.program, env);
  if (!child.started) return kExitBadInput;
  if (!ro.quiet) {
    if (child.signal)
      std::cerr << fmt::format("npu-doctor: the program was killed by signal {} ({})\n", child.signal,
                               strsignal(child.signal));
    else if (child.exit_code)
      std::cerr << fmt::format("npu-doctor: the program exited with status {}\n", child.exit_code);
  }

  std::vector<std::string> others = other_process_captures(ro.out_dir);
  std::vector<std::string> ranks = rank_captures(ro.out_dir);
  auto size = fs::file_size(capture, ec);
  if ((ec || size == 0) && ranks.size() == 1) {
    // One worker of a distributed launch: its capture is the run's.
    capture = ranks.front();
    ranks.clear();
    size = fs::file_size(capture, ec);
  }
  if (ranks.size() >= 2) {
    // A distributed launch: the report is the cluster view of the ranks' captures
    // (launch_and_analyze); capture.npud.json, when a process without RANK wrote one, is named.
    if (!ro.quiet)
      std::cerr << fmt::format("npu-doctor: {} ranks wrote their captures: {}\n", ranks.size(), fmt::join(ranks, ", "));
    out.capture = !ec && size > 0 ? capture.string() : std::string();
    out.rank_captures = std::move(ranks);
    out.other_captures = std::move(others);
    out.exit_code = child.exit_code;
    return -1;
  }
  if ((ec || size == 0) && !others.empty()) {
    // The process that claimed the name wrote nothing (its capture never started): report on
    // the first other one.
    capture = others.front();
    others.erase(others.begin());
    size = fs::file_size(capture, ec);
  }
  if (ec || size == 0) {
    std::cerr << fmt::format(
        "npu-doctor: error: no capture at {}: the program {} before the capture began (it starts when the program "
        "imports torch, and records steps {}; a step ends at each optimizer.step() or npu_doctor.step())\n",
        capture.string(), child.exit_code ? "stopped" : "finished", ro.steps);
    return child.exit_code ? child.exit_code : kExitBadInput;
  }
  if (!ro.quiet) std::cerr << fmt::format("npu-doctor: capture written to {}\n", capture.string());
  if (!ro.quiet && !others.empty())
    std::cerr << fmt::format("npu-doctor: {} other process{} of the program wrote {} own capture: {} (the report is "
                             "of the first; `npu-doctor analyze FILE` reports on another)\n",
                             others.size(), others.size() == 1 ? "" : "es", others.size() == 1 ? "its" : "their",
                             fmt::join(others, ", "));

  out.capture = capture.string();
  out.other_captures = std::move(others);
  out.exit_code = child.exit_code;
  return -1;
}

int check_launch_outputs(const LaunchRequest& req, const AnalyzeOptions& ao) {
  if (!req.old_out_dir.empty()) {
    std::cerr << fmt::format("npu-doctor: error: {}: --out-dir is now --capture-dir (-o names the report file, as "
                             "in every command)\n", req.command_name);
    return kExitBadInput;
  }
  if (!req.old_report.empty()) {
    std::cerr << fmt::format("npu-doctor: error: {}: --report is now -o/--output, as in every command (the capture "
                             "directory is --capture-dir)\n", req.command_name);
    return kExitBadInput;
  }
  // Everything that can be refused is refused before the program runs, not after it. No output
  // replaces a file the command line names (`-o train.py -- python train.py`).
  for (const std::string& arg : req.program) protect_input(arg);
  if (!ao.output.empty()) {
    try {
      AtomicFile probe(ao.output);   // no side effect until commit()
      probe.check_writable();        // the directory too: a temporary file made and removed
    } catch (const std::exception& e) {
      std::cerr << fmt::format("npu-doctor: error: -o: {} (-o names the report file; the capture goes to "
                               "--capture-dir)\n", e.what());
      return kExitBadInput;
    }
  }
  // --torch-npu and --select/--ignore: a mistyped version or rule is refused before the program
  // runs, not after it.
  if (AnalysisSettings settings; !settings_or_report(ao, false, settings)) return kExitBadInput;
  // The baseline files too: a typo found after a long training run would waste it.
  try {
    if (!ao.baseline.empty()) Baseline::load(ao.baseline);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("npu-doctor: error: {}\n", e.what());
    return kExitBadInput;
  }
  if (!output_writable_or_report(ao.write_baseline, {}, "--write-baseline")) return kExitBadInput;
  return -1;
}

int launch_and_analyze(LaunchRequest req, AnalyzeOptions ao) {
  req.quiet = ao.quiet;
  Launched launched;
  if (int code = launch_with_shim(req, launched); code >= 0) return code;
  ao.allow_truncated = true;
  ao.command = req.command_name;
  ao.require_steps = req.steps;
  ao.program_exit_code = launched.exit_code;
  ao.text_paths_relative = true;
  if (!launched.other_captures.empty() && launched.rank_captures.empty())
    ao.report_notes.push_back(fmt::format(
        "{} other process{} of the program wrote {} own capture beside this one: {}; this report is of {} only "
        "(`npu-doctor analyze FILE` reports on another)",
        launched.other_captures.size(), launched.other_captures.size() == 1 ? "" : "es",
        launched.other_captures.size() == 1 ? "its" : "their", fmt::join(launched.other_captures, ", "),
        launched.capture));
  if (!req.dump.empty()) {
    const std::string& any = launched.capture.empty() ? launched.rank_captures.front() : launched.capture;
    std::string dir = (fs::path(any).parent_path() / "dump").string();
    // The shim said it on stderr as it happened; the report says it where it is read.
    if (std::string problem = dump_problem(dir); !problem.empty())
      ao.report_notes.push_back(fmt::format("--dump {}: {}", req.dump, problem));
  }
  if (!launched.rank_captures.empty()) {
    std::vector<std::string> notes = ao.report_notes;
    std::vector<std::string> unranked = launched.other_captures;
    if (!launched.capture.empty()) unranked.insert(unranked.begin(), launched.capture);
    if (!unranked.empty())
      notes.push_back(fmt::format("{} process{} without a RANK wrote {} own capture, not in this view: {} "
                                  "(`npu-doctor analyze FILE` reports on one)",
                                  unranked.size(), unranked.size() == 1 ? "" : "es", unranked.size() == 1 ? "its" : "their",
                                  fmt::join(unranked, ", ")));
    // The cluster view has no baseline (one trace's findings; `analyze DIR` refuses it). Here the
    // program has run already: its report is still written, and says what was not done.
    for (std::string* file : {&ao.baseline, &ao.write_baseline}) {
      if (file->empty()) continue;
      notes.push_back(fmt::format("--{} {}: not applied, the program ran as {} ranks and the cluster view has no "
                                  "baseline (`npu-doctor analyze` of one rank's capture takes it)",
                                  file == &ao.baseline ? "baseline" : "write-baseline", *file,
                                  launched.rank_captures.size()));
      file->clear();
    }
    std::string dir = fs::path(launched.rank_captures.front()).parent_path().string();
    int cluster_code = analyze_rank_captures(launched.rank_captures, dir, std::move(notes), ao);
    return launched.exit_code ? launched.exit_code : cluster_code;
  }
  int report_code = analyze_trace_file(launched.capture, ao);
  return launched.exit_code ? launched.exit_code : report_code;
}

}  // namespace npud
