// See launch_child.hpp. The child runs unchanged: its stdin/stdout/stderr pass through, and
// SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to npu-doctor are forwarded to it.
#include "cli/launch_child.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/output.hpp"

namespace npud {
namespace {

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

}  // namespace

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

}  // namespace npud
