// See launch.hpp: the command-line side of the launching commands (run, amp-check): their
// options, and refusing an option written after the program's name without `--` before it.
#include "cli/launch.hpp"

#include <cstddef>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/analyze.hpp"

namespace npud {

void add_launch_options(CLI::App& cmd, LaunchRequest& req, AnalyzeOptions& ao, const std::string& out_dir_help) {
  add_report_options(cmd, ao);   // -o/--output is the report file, as in every command
  cmd.add_option("--capture-dir", req.out_dir, out_dir_help)->capture_default_str();
  // The old spellings (before -o meant the report everywhere) get a clear error, not a guess.
  cmd.add_option("--out-dir", req.old_out_dir)->group("");
  cmd.add_option("--report", req.old_report)->group("");
  cmd.add_option("--steps", req.steps,
                 "steps to record, inclusive, counted from 0 (a step ends at each optimizer.step() or "
                 "npu_doctor.step()); 'all' records every step")
      ->capture_default_str();
  cmd.add_option("PROGRAM", req.program, "the program and its arguments, after `--`")->required();
}

namespace {

// In the words after `run`/`amp-check`: where the program's name is (npos: none) and the first
// option-like word after it with no `--` before (npos: none).
struct ProgramWords {
  size_t program = std::string::npos;
  size_t misplaced_option = std::string::npos;
};

ProgramWords find_program_words(const CLI::App& cmd, const std::vector<std::string>& args) {
  ProgramWords out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;   // everything after it is the program's, as CLI11 parses it
    const bool option_like = word.size() > 1 && word[0] == '-';
    if (out.program != std::string::npos) {
      if (!option_like) continue;
      out.misplaced_option = i;
      break;
    }
    if (!option_like) {
      out.program = i;
      continue;
    }
    // One of the command's own options: its value (`--steps 2`) is no program name.
    const bool inline_value = word.starts_with("--") && word.find('=') != std::string::npos;
    const CLI::Option* opt = cmd.get_option_no_throw(word.substr(0, word.find('=')));
    if (opt && !inline_value && opt->get_expected_min() > 0) ++i;
  }
  return out;
}

}  // namespace

std::string option_after_program(const CLI::App& cmd, const std::vector<std::string>& args) {
  ProgramWords w = find_program_words(cmd, args);
  return w.misplaced_option == std::string::npos ? std::string() : args[w.misplaced_option];
}

bool refuse_options_after_program(const CLI::App& app, const std::vector<std::string>& words) {
  if (words.size() < 3 || (words[1] != "run" && words[1] != "amp-check")) return false;
  const CLI::App* cmd = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == words[1]) cmd = sub;
  if (!cmd) return false;
  std::vector<std::string> args(words.begin() + 2, words.end());
  ProgramWords w = find_program_words(*cmd, args);
  if (w.misplaced_option == std::string::npos) return false;
  std::vector<std::string> program(args.begin() + std::ptrdiff_t(w.program), args.end());
  std::cerr << fmt::format("npu-doctor: error: {0}: {1} comes after the program's name, so npu-doctor would take it "
                           "as its own option and start the program without it: put `--` before the program: "
                           "npu-doctor {0} [OPTIONS] -- {2}\n",
                           words[1], args[w.misplaced_option], fmt::join(program, " "));
  return true;
}

}  // namespace npud
