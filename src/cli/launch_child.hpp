// Running the launched program as a child process (launch.cpp): stdin/stdout/stderr pass
// through, SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to npu-doctor are forwarded to it.
#pragma once

#include <string>
#include <vector>

namespace npud {

struct ChildResult {
  bool started = false;
  int exit_code = 0;     // exit status, or 128 + signal
  int signal = 0;
};

// Runs `command` with `env_overrides` ("NAME=value") set, forwarding signals, to its end.
ChildResult run_child(const std::vector<std::string>& command, const std::vector<std::string>& env_overrides);

}  // namespace npud
