// `npu-doctor run [options] -- PROGRAM ARGS...`: starts the user's program unchanged with the
// capture shim injected (PYTHONPATH bootstrap + NPUD_CAPTURE/NPUD_STEPS), waits for it,
// then analyses the capture it wrote, like `analyze` does. See docs/capture.md. The launching
// itself is shared with amp-check (cli/launch.hpp).
#include <memory>
#include <string>
#include <vector>

#include "cli/analyze.hpp"
#include "cli/commands.hpp"
#include "cli/launch.hpp"

namespace npud {
namespace {

struct RunOptions {
  std::string steps = "1:3";
  std::string out_dir = "npu-doctor-out";
  std::string dump;   // tensor dump selection (docs/formats/dump.md); "" = no dump
  std::vector<std::string> command;
};

int run_command(const RunOptions& ro, AnalyzeOptions ao) {
  LaunchRequest req;
  req.command_name = "run";
  req.program = ro.command;
  req.steps = ro.steps;
  req.out_dir = ro.out_dir;
  req.quiet = ao.quiet;
  if (!ro.dump.empty()) req.extra_env.push_back("NPUD_DUMP=" + ro.dump);   // tensors go to OUT_DIR/dump/
  Launched launched;
  if (int code = launch_with_shim(req, launched); code >= 0) return code;

  ao.allow_truncated = true;   // a killed program leaves a cut-off last line
  ao.command = "run";
  int report_code = analyze_trace_file(launched.capture, ao);
  // A failed program's status wins, so scripts and CI still see the failure.
  return launched.exit_code ? launched.exit_code : report_code;
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
  cmd->add_option("--dump", ro->dump,
                  "also dump tensors of the recorded steps to OUT_DIR/dump/ for `npu-doctor compare`: a comma list of "
                  "module paths and aten ops with * globs ('model.layers.*.mlp,aten::softmax'), 'all' = every "
                  "module's output");
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
