// Each subcommand lives in its own file and adds itself to the app here.
#pragma once

#include <CLI/CLI.hpp>

namespace npud {

// Exit codes, as documented in --help: 0 clean, 1 findings at or above --fail-on,
// 2 bad input or usage.
inline constexpr int kExitClean = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitBadInput = 2;

// Each add_* registers one subcommand; its callback stores the exit code in `exit_code`.
void add_analyze_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_rules_command(CLI::App& app, int& exit_code);
void add_scan_command(CLI::App& app, int& exit_code);
void add_diff_command(CLI::App& app, int& exit_code);
void add_env_command(CLI::App& app, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_amp_check_command(CLI::App& app, int& exit_code);

}  // namespace npud
