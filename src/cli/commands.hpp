// Each subcommand lives in its own file and adds itself to the app here.
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace npud {

// Exit codes, as documented in --help: 0 clean, 1 findings at or above --fail-on,
// 2 bad input or usage.
inline constexpr int kExitClean = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitBadInput = 2;

// A number option that must be finite and within [lo, hi]. (CLI::Range lets NaN through: every
// comparison with NaN is false; and a negative --top would wrap around in a size_t.)
inline CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        char* end = nullptr;
        double v = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < lo || v > hi)
          return "'" + s + "' is not a number from " + CLI::detail::to_string(lo) + " to " + CLI::detail::to_string(hi);
        return {};
      },
      "NUMBER");
}

// Each add_* registers one subcommand; its callback stores the exit code in `exit_code`.
void add_analyze_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_rules_command(CLI::App& app, int& exit_code);
void add_scan_command(CLI::App& app, int& exit_code);
void add_diff_command(CLI::App& app, int& exit_code);
void add_env_command(CLI::App& app, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_amp_check_command(CLI::App& app, int& exit_code);
void add_merge_command(CLI::App& app, int& exit_code);
void add_docs_command(CLI::App& app, int& exit_code);

// The doc of the rule `word` names (an id or a profile rule's name, any case), or "".
std::string_view rule_doc(std::string_view word);

// The embedded doc `npu-doctor docs TOPIC` prints ("configuration", "docs/formats/dump.md", a
// rule id), or "" when there is none.
std::string_view find_topic_doc(std::string_view topic);

}  // namespace npud
