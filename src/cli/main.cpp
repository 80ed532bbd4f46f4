// npu-doctor: finds what slows or breaks PyTorch programs on Ascend NPUs.
#include <iostream>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "npu-doctor: finds what slows or breaks PyTorch programs on Ascend NPUs (torch_npu), "
      "in profiles you have and in programs you run."};
  app.set_version_flag("--version", std::string("npu-doctor ") + NPUD_VERSION);
  app.require_subcommand(1);
  app.footer("Run `npu-doctor COMMAND --help` for a command's options. Exit codes: 0 clean, "
             "1 findings at or above --fail-on, 2 bad input or usage.");

  int exit_code = npud::kExitClean;
  npud::add_analyze_command(app, exit_code);
  npud::add_run_command(app, exit_code);
  npud::add_amp_check_command(app, exit_code);
  npud::add_scan_command(app, exit_code);
  npud::add_diff_command(app, exit_code);
  npud::add_env_command(app, exit_code);
  npud::add_compare_command(app, exit_code);
  npud::add_rules_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return npud::kExitBadInput;
  }
  return exit_code;
}
