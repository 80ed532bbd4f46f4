// Starting the user's program with the capture shim injected, shared by `run` and
// `amp-check`: PYTHONPATH bootstrap + NPUD_CAPTURE/NPUD_STEPS (plus the command's own NPUD_*
// variables), signal forwarding, exit-status reporting and the "no capture" check.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/analyze.hpp"

namespace npud {

inline constexpr const char* kCaptureName = "capture.npud.json";

// "A:B" with 0 <= A <= B, "N" (= N:N), "A:" (from A on) or "all".
bool valid_steps(const std::string& steps);

struct LaunchRequest {
  std::string command_name;               // "run", "amp-check": for messages
  std::vector<std::string> program;       // argv of the program
  std::string steps = "1:3";
  std::string out_dir = "npu-doctor-out";
  std::vector<std::string> extra_env;     // "NAME=value", on top of the shim's variables
  std::string dump;                       // run --dump's selection (NPUD_DUMP); "" = no dump
  bool quiet = false;
  std::string old_out_dir, old_report;    // the retired spellings, refused with a message
};

struct Launched {
  std::string capture;                    // absolute path of the capture file
  // Captures other processes of the run wrote beside it (capture.<pid>.npud.json: processes
  // that inherited NPUD_CAPTURE, e.g. two workers of one shell line), by name.
  std::vector<std::string> other_captures;
  // The workers' captures of a distributed launch (capture.rank<R>.npud.json), by rank, when
  // two or more ranks wrote one: the report is then their cluster view.
  std::vector<std::string> rank_captures;
  int exit_code = 0;                      // the program's status (128 + N when killed by signal N)
};

// Checks the request, creates out_dir, runs the program to its end and checks that it left
// a capture. Returns -1 when there is a capture to analyse (out filled), otherwise the exit
// code the command should end with (the message is already on stderr).
int launch_with_shim(const LaunchRequest& req, Launched& out);

// The options every launching command has, bound into req and ao: the report options (-o is
// the report file, as everywhere), --capture-dir, --steps and the program after `--`.
void add_launch_options(CLI::App& cmd, LaunchRequest& req, AnalyzeOptions& ao, const std::string& out_dir_help);

// `npu-doctor run python3 train.py --steps 2` (no `--`): CLI11 takes --steps as run's own and the
// program starts without it. The first word that looks like an option (`-x`, `--x`) after the
// program's name has begun and before any `--`, or "" when there is none. `cmd`: the run or
// amp-check command (its options tell which take a value); `args`: the words after its name.
std::string option_after_program(const CLI::App& cmd, const std::vector<std::string>& args);

// For `words` = argv: when words[1] is a launching command (run, amp-check) and
// option_after_program finds a word, says "put `--` before the program" on stderr; true then.
bool refuse_options_after_program(const CLI::App& app, const std::vector<std::string>& words);

// Refuses, before anything runs, what would fail after the program: the retired spellings
// --out-dir/--report, a report path that cannot be written (a directory), an unknown
// --torch-npu. Returns -1 when all is well, else the exit code (message on stderr).
int check_launch_outputs(const LaunchRequest& req, const AnalyzeOptions& ao);

// Launches req, then analyses its capture like `analyze` (a killed program's cut-off last
// line allowed). With req.dump, a dump folder `compare` cannot use (the program's Python
// lacks numpy, nothing matched) is said in the report's notes. Each command calls check_launch_outputs first, before any side effect. A failed program's status wins over the report's, so scripts and CI still
// see the failure.
int launch_and_analyze(LaunchRequest req, AnalyzeOptions ao);

}  // namespace npud
