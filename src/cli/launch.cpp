// See launch.hpp. The child runs unchanged: its stdin/stdout/stderr pass through, and
// SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to npu-doctor are forwarded to it.
#include "cli/launch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pipeline/baseline.hpp"
#include "cli/cluster.hpp"
#include "cli/commands.hpp"
#include "cli/inputs.hpp"
#include "cli/output.hpp"
#include "cli/python_options.hpp"
#include "numeric/dump.hpp"
#include "util/atomic_file.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBootstrap = "npu_doctor/_bootstrap/sitecustomize.py";

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

namespace {

bool has_shim(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kBootstrap, ec);
}

// The folders of <prefix>/lib/python3.*/{site,dist}-packages: where pip puts the npu_doctor
// package of a wheel whose binary it put in <prefix>/bin (a venv, --user, a system prefix).
std::vector<fs::path> pip_package_dirs(const fs::path& prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const char* lib : {"lib", "lib64"}) {
    fs::directory_iterator it(prefix / lib, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.rfind("python3", 0) != 0) continue;
      for (const char* sub : {"site-packages", "dist-packages"}) out.push_back(it->path() / sub);
    }
    if (!out.empty()) break;
  }
  return out;
}

// $NPUD_PYTHON_DIR, else the copy installed with the binary: `cmake --install` puts it in
// <prefix>/share/npu-doctor/python, a wheel in the site-packages of the prefix whose bin/
// holds the binary; else (a binary run from its build folder) the checkout's python/ next to
// that folder, or the source tree it was configured from (not compiled into wheels).
std::string find_python_dir(std::string& tried) {
  if (const char* env = std::getenv("NPUD_PYTHON_DIR"); env && *env) {
    tried = env;
    return has_shim(env) ? fs::absolute(env).string() : std::string();
  }
  std::vector<fs::path> candidates;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path prefix = exe.parent_path().parent_path();
    candidates.push_back(prefix / "share" / "npu-doctor" / "python");
    for (auto& dir : pip_package_dirs(prefix)) candidates.push_back(std::move(dir));
    // A binary in a build folder directly under a checkout (build/npu-doctor, also when that
    // folder is a pip build's): the checkout's python/.
    candidates.push_back(prefix / "python");
  }
#ifdef NPUD_SOURCE_PYTHON_DIR
  candidates.emplace_back(NPUD_SOURCE_PYTHON_DIR);
#endif
  for (const auto& c : candidates) {
    tried += (tried.empty() ? "" : ", ") + c.string();
    if (has_shim(c)) return fs::absolute(c).string();
  }
  return {};
}

// --- the child ---------------------------------------------------------------------------

volatile sig_atomic_t g_child = 0;

// Forwards SIGTERM/SIGHUP/SIGQUIT, and SIGINT when someone sent it to us alone: a Ctrl-C
// from the terminal already reaches the child through its process group (SI_KERNEL).
void forward_signal(int sig, siginfo_t* info, void*) {
  pid_t child = g_child;
  if (child <= 0) return;
  if (sig == SIGINT && info && info->si_code != SI_USER && info->si_code != SI_QUEUE) return;
  kill(child, sig);
}

struct SignalForwarding {
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  struct sigaction saved[4];

  SignalForwarding() {
    for (int i = 0; i < 4; ++i) {
      struct sigaction sa {};
      sa.sa_sigaction = forward_signal;
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&sa.sa_mask);
      sigaction(kSignals[i], &sa, &saved[i]);
    }
  }
  ~SignalForwarding() {
    for (int i = 0; i < 4; ++i) sigaction(kSignals[i], &saved[i], nullptr);
  }
};

struct ChildResult {
  bool started = false;
  int exit_code = 0;     // exit status, or 128 + signal
  int signal = 0;
};

ChildResult run_child(const std::vector<std::string>& command, const std::vector<std::string>& env_overrides) {
  ChildResult r;
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  SignalForwarding forwarding;
  std::cout.flush();
  std::cerr.flush();
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    std::cerr << fmt::format("npu-doctor: error: cannot start {}: {}\n", command[0], std::strerror(errno));
    return r;
  }
  if (pid == 0) {
    // Child: dies with npu-doctor (a SIGKILLed `run` must not leave the program running),
    // default signal handling, the shim's environment, then the program itself.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(128 + SIGKILL);   // the parent died before prctl took effect
    for (int s : SignalForwarding::kSignals) signal(s, SIG_DFL);
    for (const auto& kv : env_overrides) {
      auto eq = kv.find('=');
      setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
    }
    close_guarded_fds();
    execvp(argv[0], argv.data());
    int err = errno;
    std::string msg = fmt::format("npu-doctor: error: cannot run {}: {}\n", command[0], std::strerror(err));
    ssize_t ignored = write(STDERR_FILENO, msg.data(), msg.size());
    (void)ignored;
    _exit(err == ENOENT ? 127 : 126);
  }
  g_child = pid;
  r.started = true;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      status = 0;
      break;
    }
  }
  g_child = 0;
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
    r.exit_code = 128 + r.signal;
  }
  return r;
}

}  // namespace

// Two runs writing one capture directory would interleave their events into one capture and
// both report on the mixture: the directory is locked (flock on DIR/.npu-doctor.lock) from
// before the program starts until this process ends, and a second run is refused at once.
// `python -E` / `-I` (also combined, `-sE`) ignores PYTHONPATH, which is how the shim gets
// into the program: the run would "succeed" with no capture and blame the program. The
// option that does it, or "" when the program is not such a Python.
static std::string python_flag_hiding_the_shim(const std::vector<std::string>& program) {
  if (program.empty() || fs::path(program[0]).filename().string().rfind("python", 0) != 0) return {};
  namespace po = python_options;  // the shim's list too (python/npu_doctor/_interpreter.py)
  for (size_t i = 1; i < program.size(); ++i) {
    const std::string& a = program[i];
    if (a == "--" || a.size() < 2 || a[0] != '-') break;  // the script or `-`
    if (a[1] == '-') {                                     // a long option, maybe with a value
      if (std::find(po::kLongWithValue.begin(), po::kLongWithValue.end(), a) != po::kLongWithValue.end()) ++i;
      continue;
    }
    for (size_t k = 1; k < a.size(); ++k) {                // a cluster of flags: -sE, -uW ignore
      if (po::kShortProgram.find(a[k]) != std::string_view::npos) return {};  // the program follows
      if (a[k] == 'E' || a[k] == 'I') return a;
      if (po::kShortWithValue.find(a[k]) != std::string_view::npos) {
        if (k + 1 == a.size()) ++i;                        // its value is the next word
        break;                                             // else the rest of this one
      }
    }
  }
  return {};
}

// The tag of a capture file's name: what lies between "capture." and ".npud.json" (the shim's
// _autostart names them), or "" for any other name.
static std::string_view capture_tag(std::string_view name) {
  constexpr std::string_view kPrefix = "capture.", kSuffix = ".npud.json";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) || !name.ends_with(kSuffix))
    return {};
  return name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
}

static bool all_digits(std::string_view s) { return !s.empty() && s.find_first_not_of("0123456789") == s.npos; }

// capture.<pid>.npud.json: the capture of another process of the run, when several inherited
// NPUD_CAPTURE.
static bool is_other_process_capture(const std::string& name) { return all_digits(capture_tag(name)); }

// capture.rank<R>.npud.json: the capture of the worker of rank R of a distributed launch
// (torchrun, accelerate, deepspeed set RANK); -1 for any other name.
static int rank_of_capture(const std::string& name) {
  std::string_view tag = capture_tag(name);
  if (!tag.starts_with("rank") || !all_digits(tag.substr(4)) || tag.size() > 13) return -1;
  int rank = 0;
  std::from_chars(tag.data() + 4, tag.data() + tag.size(), rank);
  return rank;
}

// The non-empty captures in dir whose name `keep` accepts, sorted by name.
template <typename Keep>
static std::vector<std::string> captures_in(const std::string& dir, Keep keep) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (keep(it->path().filename().string()) && it->is_regular_file(size_ec) && it->file_size(size_ec) > 0 && !size_ec)
      out.push_back(fs::absolute(it->path()).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The other processes' non-empty captures in dir, sorted by name.
static std::vector<std::string> other_process_captures(const std::string& dir) {
  return captures_in(dir, is_other_process_capture);
}

// The ranks' non-empty captures in dir, by rank.
static std::vector<std::string> rank_captures(const std::string& dir) {
  std::vector<std::string> out = captures_in(dir, [](const std::string& n) { return rank_of_capture(n) >= 0; });
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return rank_of_capture(fs::path(a).filename().string()) < rank_of_capture(fs::path(b).filename().string());
  });
  return out;
}

// PYTHONPATH splits at ':', so a shim under a folder whose path holds one (a legal name) would
// never load and the run would blame the program (issue 31 F-25). Such a shim is reached
// through a link: a fresh folder without ':' (under $TMPDIR, else /tmp) holding
// `npu_doctor` -> the package. The bootstrap finds the package as its own parent folder
// without resolving links, so it loads through the link. Removed (the link only) when the
// run ends.
class ShimLink {
 public:
  ShimLink() = default;
  ShimLink(const ShimLink&) = delete;
  ShimLink& operator=(const ShimLink&) = delete;
  ~ShimLink() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);   // removes the link, never what it leads to
  }
  // The folder to use in place of python_dir, or "" after printing why not.
  std::string make(const std::string& python_dir) {
    for (std::string base : {std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : ""), std::string("/tmp")}) {
      if (base.empty() || base.find(':') != std::string::npos) continue;
      std::string tmpl = (fs::path(base) / "npu-doctor-shim-XXXXXX").string();
      if (!::mkdtemp(tmpl.data())) continue;
      dir_ = tmpl;
      std::error_code ec;
      fs::create_directory_symlink(fs::path(python_dir) / "npu_doctor", fs::path(dir_) / "npu_doctor", ec);
      if (!ec) return dir_;
    }
    std::cerr << fmt::format("npu-doctor: error: the capture shim's folder {} holds ':', which splits PYTHONPATH, "
                             "and no link to it could be made in $TMPDIR or /tmp: install npu-doctor under a path "
                             "without ':' or set NPUD_PYTHON_DIR to a copy of the npu_doctor package's parent folder "
                             "there\n", python_dir);
    return {};
  }

 private:
  std::string dir_;
};

static bool lock_capture_dir(const std::string& dir) {
  std::string path = (fs::path(dir) / ".npu-doctor.lock").string();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    std::cerr << fmt::format("npu-doctor: error: cannot lock {}: {}\n", path, std::strerror(errno));
    return false;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      std::cerr << fmt::format("npu-doctor: error: another npu-doctor run is writing its capture in {}: wait for "
                               "it, or give this one another --capture-dir\n", dir);
    else
      std::cerr << fmt::format("npu-doctor: error: cannot lock {}: {}\n", path, std::strerror(err));
    return false;
  }
  return true;  // fd stays open (and locked) until the process exits
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
  std::string python_dir = find_python_dir(tried);
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

void add_launch_options(CLI::App& cmd, LaunchRequest& req, AnalyzeOptions& ao, const std::string& out_dir_help) {
  add_report_options(cmd, ao);   // -o/--output is the report file, as in every command
  cmd.add_option("--capture-dir", req.out_dir, out_dir_help)->capture_default_str();
  // The old spellings (before -o meant the report everywhere) get a clear error, not a guess.
  cmd.add_option("--out-dir", req.old_out_dir)->group("");
  cmd.add_option("--report", req.old_report)->group("");
  cmd.add_option("--steps", req.steps,
                 "steps to record, inclusive, counted from 0 (a step ends at each optimizer.step() or "
                 "npu_doctor.step()); 'all' records every step")
      ->capture_default_str();
  cmd.add_option("PROGRAM", req.program, "the program and its arguments, after `--`")->required();
}

namespace {

// In the words after `run`/`amp-check`: where the program's name is (npos: none) and the first
// option-like word after it with no `--` before (npos: none).
struct ProgramWords {
  size_t program = std::string::npos;
  size_t misplaced_option = std::string::npos;
};

ProgramWords find_program_words(const CLI::App& cmd, const std::vector<std::string>& args) {
  ProgramWords out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;   // everything after it is the program's, as CLI11 parses it
    const bool option_like = word.size() > 1 && word[0] == '-';
    if (out.program != std::string::npos) {
      if (!option_like) continue;
      out.misplaced_option = i;
      break;
    }
    if (!option_like) {
      out.program = i;
      continue;
    }
    // One of the command's own options: its value (`--steps 2`) is no program name.
    const bool inline_value = word.starts_with("--") && word.find('=') != std::string::npos;
    const CLI::Option* opt = cmd.get_option_no_throw(word.substr(0, word.find('=')));
    if (opt && !inline_value && opt->get_expected_min() > 0) ++i;
  }
  return out;
}

}  // namespace

std::string option_after_program(const CLI::App& cmd, const std::vector<std::string>& args) {
  ProgramWords w = find_program_words(cmd, args);
  return w.misplaced_option == std::string::npos ? std::string() : args[w.misplaced_option];
}

bool refuse_options_after_program(const CLI::App& app, const std::vector<std::string>& words) {
  if (words.size() < 3 || (words[1] != "run" && words[1] != "amp-check")) return false;
  const CLI::App* cmd = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == words[1]) cmd = sub;
  if (!cmd) return false;
  std::vector<std::string> args(words.begin() + 2, words.end());
  ProgramWords w = find_program_words(*cmd, args);
  if (w.misplaced_option == std::string::npos) return false;
  std::vector<std::string> program(args.begin() + std::ptrdiff_t(w.program), args.end());
  std::cerr << fmt::format("npu-doctor: error: {0}: {1} comes after the program's name, so npu-doctor would take it "
                           "as its own option and start the program without it: put `--` before the program: "
                           "npu-doctor {0} [OPTIONS] -- {2}\n",
                           words[1], args[w.misplaced_option], fmt::join(program, " "));
  return true;
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
  if (!torch_npu_version_or_report(ao.torch_npu)) return kExitBadInput;
  // --select/--ignore too: a mistyped rule is refused before the program runs, not after it.
  if (std::vector<const Rule*> rules; !rules_or_report(ao, rules)) return kExitBadInput;
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
