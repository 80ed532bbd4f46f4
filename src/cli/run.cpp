// `npu-doctor run [options] -- PROGRAM ARGS...`: starts the user's program unchanged with the
// capture shim injected (PYTHONPATH bootstrap + NPUD_CAPTURE/NPUD_STEPS), waits for it,
// then analyses the capture it wrote, like `analyze` does. See docs/capture.md.
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/analyze.hpp"
#include "cli/commands.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCaptureName = "capture.npud.json";
constexpr const char* kBootstrap = "npu_doctor/_bootstrap/sitecustomize.py";

struct RunOptions {
  std::string steps = "1:3";
  std::string out_dir = "npu-doctor-out";
  std::vector<std::string> command;
};

// "A:B" with 0 <= A <= B, "N" (= N:N), "A:" (from A on) or "all".
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

bool has_shim(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kBootstrap, ec);
}

// The directory holding the `npu_doctor` package: $NPUD_PYTHON_DIR, else an installed copy
// next to the binary (<prefix>/share/npu-doctor/python), else the source tree's python/.
std::string find_python_dir(std::string& tried) {
  if (const char* env = std::getenv("NPUD_PYTHON_DIR"); env && *env) {
    tried = env;
    return has_shim(env) ? fs::absolute(env).string() : std::string();
  }
  std::vector<fs::path> candidates;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / "share" / "npu-doctor" / "python");
  candidates.emplace_back(NPUD_PYTHON_DIR);
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
  pid_t pid = fork();
  if (pid < 0) {
    std::cerr << fmt::format("npu-doctor: error: cannot start {}: {}\n", command[0], std::strerror(errno));
    return r;
  }
  if (pid == 0) {
    // Child: default signal handling, the shim's environment, then the program itself.
    for (int s : SignalForwarding::kSignals) signal(s, SIG_DFL);
    for (const auto& kv : env_overrides) {
      auto eq = kv.find('=');
      setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
    }
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

int run_command(const RunOptions& ro, AnalyzeOptions ao) {
  if (ro.command.empty()) {
    std::cerr << "npu-doctor: error: run: no program given (usage: npu-doctor run [OPTIONS] -- python train.py ...)\n";
    return kExitBadInput;
  }
  if (!valid_steps(ro.steps)) {
    std::cerr << fmt::format("npu-doctor: error: --steps '{}': expected A:B with 0 <= A <= B (e.g. 1:3)\n", ro.steps);
    return kExitBadInput;
  }
  std::string tried;
  std::string python_dir = find_python_dir(tried);
  if (python_dir.empty()) {
    std::cerr << fmt::format("npu-doctor: error: cannot find the capture shim ({}) in: {} (set NPUD_PYTHON_DIR to "
                             "the directory that holds the npu_doctor package)\n", kBootstrap, tried);
    return kExitBadInput;
  }

  std::error_code ec;
  fs::create_directories(ro.out_dir, ec);
  if (ec) {
    std::cerr << fmt::format("npu-doctor: error: cannot create {}: {}\n", ro.out_dir, ec.message());
    return kExitBadInput;
  }
  fs::path capture = fs::absolute(fs::path(ro.out_dir) / kCaptureName);
  fs::remove(capture, ec);   // a stale capture must not pass for this run's

  std::string pythonpath = (fs::path(python_dir) / "npu_doctor" / "_bootstrap").string() + ":" + python_dir;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
  std::vector<std::string> env = {"PYTHONPATH=" + pythonpath, "NPUD_CAPTURE=" + capture.string(),
                                  "NPUD_STEPS=" + ro.steps};

  ChildResult child = run_child(ro.command, env);
  if (!child.started) return kExitBadInput;
  if (!ao.quiet) {
    if (child.signal)
      std::cerr << fmt::format("npu-doctor: the program was killed by signal {} ({})\n", child.signal,
                               strsignal(child.signal));
    else if (child.exit_code)
      std::cerr << fmt::format("npu-doctor: the program exited with status {}\n", child.exit_code);
  }

  auto size = fs::file_size(capture, ec);
  if (ec || size == 0) {
    std::cerr << fmt::format(
        "npu-doctor: error: no capture at {}: the program {} before the capture began (it starts when the program "
        "imports torch, and records steps {}; a step ends at each optimizer.step() or npu_doctor.step())\n",
        capture.string(), child.exit_code ? "stopped" : "finished", ro.steps);
    return child.exit_code ? child.exit_code : kExitBadInput;
  }
  if (!ao.quiet) std::cerr << fmt::format("npu-doctor: capture written to {}\n", capture.string());

  ao.allow_truncated = true;   // a killed program leaves a cut-off last line
  ao.command = "run";
  int report_code = analyze_trace_file(capture.string(), ao);
  // A failed program's status wins, so scripts and CI still see the failure.
  return child.exit_code ? child.exit_code : report_code;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "run", "Run a PyTorch program with the capture shim, then analyse what it did: "
             "npu-doctor run [OPTIONS] -- python train.py ARGS...");
  auto ro = std::make_shared<RunOptions>();
  auto ao = std::make_shared<AnalyzeOptions>();
  add_report_options(*cmd, *ao);
  // `-o` names the capture directory here (as in the usage); the report file is --report.
  if (CLI::Option* report_out = cmd->get_option_no_throw("--output")) cmd->remove_option(report_out);
  cmd->add_option("--report", ao->output, "write the report to FILE instead of stdout (atomically)");
  cmd->add_option("-o,--out-dir", ro->out_dir, "directory for the capture (capture.npud.json)")->capture_default_str();
  cmd->add_option("--steps", ro->steps,
                  "steps to record, inclusive, counted from 0 (a step ends at each optimizer.step() or "
                  "npu_doctor.step()); 'all' records every step")
      ->capture_default_str();
  cmd->add_option("PROGRAM", ro->command, "the program and its arguments, after `--`")->required();
  cmd->footer(
      "The program runs unchanged; its stdin/stdout/stderr pass through and SIGINT/SIGTERM are forwarded to it. "
      "The shim starts when the program imports torch and stops after the last recorded step. "
      "Exit codes: the program's own status when it failed (128+N when killed by signal N; the report is still "
      "printed), otherwise 0 no finding at or above --fail-on, 1 findings at or above --fail-on, 2 bad input, "
      "usage, or no capture.");
  cmd->callback([ro, ao, &exit_code] { exit_code = run_command(*ro, *ao); });
}

}  // namespace npud
