// `npu-doctor run [options] -- PROGRAM ARGS...`: starts the user's program unchanged with the
// capture shim injected (PYTHONPATH bootstrap + NPUD_CAPTURE/NPUD_STEPS), waits for it,
// then analyses the capture it wrote, like `analyze` does. See docs/capture.md. The launching
// itself is shared with amp-check (cli/launch.hpp).
#include <memory>
#include <string>
#include <utility>

#include "cli/analyze.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/launch.hpp"

namespace npud {
namespace {

struct RunOptions {
  LaunchRequest launch;   // launch.dump: the tensor dump selection (docs/formats/dump.md)
};

int run_command(const RunOptions& ro, const AnalyzeOptions& ao) {
  LaunchRequest req = ro.launch;
  req.command_name = "run";
  if (int code = check_launch_outputs(req, ao); code >= 0) return code;
  return launch_and_analyze(std::move(req), ao);
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "run", "Run a PyTorch program with the capture shim, then analyse what it did: "
             "npu-doctor run [OPTIONS] -- python3 train.py ARGS...");
  auto ro = std::make_shared<RunOptions>();
  auto ao = std::make_shared<AnalyzeOptions>();
  add_launch_options(*cmd, ro->launch, *ao, "directory for the capture (capture.npud.json)");
  cmd->add_option("--dump", ro->launch.dump,
                  "also dump tensors of the recorded steps to CAPTURE_DIR/dump/ for `npu-doctor compare`: a comma list of "
                  "module paths and aten ops with * globs ('model.layers.*.mlp,aten::softmax'), 'all' = every "
                  "module's output");
  cmd->footer(
      "The program runs unchanged; its stdin/stdout/stderr pass through and SIGINT/SIGTERM are forwarded to it. "
      "The shim starts when the program imports torch and stops after the last recorded step. "
      "Processes that inherit the capture before any of them imports torch (workers of a shell line or of a "
      "launcher without torch) each write their own: the first capture.npud.json, the others "
      "capture.<pid>.npud.json beside it; the report is of the first and names the others. "
      "-o is checked, its directory included, before the program starts. "
      "Settings: [tool.npu-doctor] in pyproject.toml or npu-doctor.toml, the nearest above the working directory; "
      "`# npu-doctor: ignore[ID]` or `# noqa: ID` on a finding's line silences it (`npu-doctor docs configuration`). "
      "Exit codes: the program's own status when it failed (128+N when killed by signal N; the report is still "
      "printed), otherwise 0 no finding at or above --fail-on, 1 findings at or above --fail-on, 2 bad input, "
      "usage, or no capture.");
  cmd->callback([cmd, ro, ao, &exit_code] {
    exit_code = apply_config_or_report(*cmd, ".", *ao) ? run_command(*ro, *ao) : kExitBadInput;
  });
}

}  // namespace npud
