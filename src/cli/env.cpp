// `npu-doctor env`: reports the installed Python, torch, torch_npu, CANN and driver, and
// checks them against the knowledge base's compatibility table. See docs/env.md.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "env/env_probe.hpp"
#include "knowledge/knowledge.hpp"
#include "report/env_report.hpp"

namespace npud {
namespace {

struct EnvOptions {
  std::string python = "python3";
  std::string cann_home;          // empty = default_cann_home()
  std::string driver_home = "/usr/local/Ascend/driver";
  std::string format = "text";
  std::string output;
  int timeout_s = 60;
};

int env_command(const EnvOptions& o) {
  EnvReport r;
  r.python = probe_python(o.python, o.timeout_s);
  r.cann = read_cann(o.cann_home.empty() ? default_cann_home() : o.cann_home);
  r.driver = read_driver(o.driver_home);
  check_env(r, Knowledge::builtin());
  bool written = emit_report(o.output, false, [&](std::ostream& os, bool) {
    if (o.format == "json") render_env_json(os, r);
    else render_env_text(os, r);
  });
  if (!written) return kExitBadInput;
  if (!r.python.ran) return kExitBadInput;   // never "consistent" about a Python that did not answer
  return r.consistent() ? kExitClean : kExitFindings;
}

}  // namespace

void add_env_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("env", "Show the installed Python, torch, torch_npu, CANN and Ascend driver, and "
                                        "check them against the compatibility table (works without torch_npu)");
  auto o = std::make_shared<EnvOptions>();
  cmd->add_option("--python", o->python, "the Python that runs your training")->capture_default_str();
  cmd->add_option("--cann-home", o->cann_home,
                  "CANN toolkit directory (default: $ASCEND_TOOLKIT_HOME, $ASCEND_HOME_PATH, "
                  "/usr/local/Ascend/ascend-toolkit/latest)");
  cmd->add_option("--driver-home", o->driver_home, "Ascend driver directory")->capture_default_str();
  cmd->add_option("--format", o->format, "output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  add_output_option(*cmd, o->output, &o->format);
  cmd->add_option("--timeout", o->timeout_s, "seconds to wait for Python to answer")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->footer("Exit codes: 0 consistent, 1 mismatch found (the output says what to install), 2 usage, or the "
              "Python could not be run or did not answer.");
  cmd->callback([o, &exit_code] { exit_code = env_command(*o); });
}

}  // namespace npud
