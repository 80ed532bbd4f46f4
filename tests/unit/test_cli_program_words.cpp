// `npu-doctor run python3 train.py --steps 2` (no `--`): which words run/amp-check refuse
// before the program starts (issue 30).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/launch.hpp"

namespace npud {
namespace {

const CLI::App& run_command() {
  static CLI::App app;
  static int code = 0;
  static bool added = (add_run_command(app, code), true);
  (void)added;
  return *app.get_subcommands([](const CLI::App* c) { return c->get_name() == "run"; }).front();
}

std::string misplaced(std::vector<std::string> args) { return option_after_program(run_command(), args); }

TEST(ProgramWords, OptionsAfterTheProgramNameWithoutDoubleDashAreFound) {
  EXPECT_EQ(misplaced({"python3", "train.py", "--steps", "2"}), "--steps");
  EXPECT_EQ(misplaced({"-q", "python3", "train.py", "-o", "x"}), "-o");
  EXPECT_EQ(misplaced({"python3", "-c", "pass"}), "-c");
  // An option's value is not the program: `--steps 2 python3 x.py --lr 1` refuses --lr.
  EXPECT_EQ(misplaced({"--steps", "2", "python3", "x.py", "--lr", "1"}), "--lr");
  EXPECT_EQ(misplaced({"--capture-dir", "out", "python3", "x.py", "-v"}), "-v");
}

TEST(ProgramWords, DoubleDashOrNoOptionAfterTheProgramIsAccepted) {
  EXPECT_EQ(misplaced({"--", "python3", "train.py", "--steps", "2"}), "");
  EXPECT_EQ(misplaced({"--steps=2", "-q", "--", "python3", "-c", "pass"}), "");
  EXPECT_EQ(misplaced({"python3", "train.py", "data.txt"}), "");
  EXPECT_EQ(misplaced({"python3", "-", "x"}), "");   // `-` is stdin, a program argument
  EXPECT_EQ(misplaced({"-q", "--steps", "all"}), "");
}

}  // namespace
}  // namespace npud
