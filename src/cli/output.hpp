// Where a command's report goes: stdout, or a file written atomically (-o/--output).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace npud {

// Adds -o/--output FILE to a command: the report goes to FILE, written atomically (emit_report);
// `-o -` is stdout, as in other command-line tools (it used to write a file named "-").
// With `format` (the variable the command's --format option, added before, writes): a file
// whose extension names a format the command writes sets it when --format is not given
// (`-o report.html` writes HTML, `-o results.sarif` SARIF), and a --format the extension
// contradicts (`--format text -o report.html`) is a usage error (exit 2).
CLI::Option* add_output_option(CLI::App& cmd, std::string& path, std::string* format = nullptr);

// The formats a file name's extension allows, the first the one it names: {"html"} for .html,
// {"json", "sarif", "summary"} for .json; empty for an extension that names none.
std::vector<std::string_view> formats_of_extension(std::string_view path);

// Adds --project-root DIR to a command that writes SARIF or `--format github`: the paths in them
// are said relative to DIR (default: the git root above the working directory, else it;
// report/sarif.hpp).
CLI::Option* add_project_root_option(CLI::App& cmd, std::string& dir);

// Calls render(stream, color) once, on stdout when `path` is empty (color only when asked
// for, stdout is a terminal and NO_COLOR is unset) or on a temporary file renamed to `path`,
// then says on stderr where the report went ("npu-doctor: report written to FILE"; not with
// `say_where` false: -q). Returns false after printing "npu-doctor: error: ..." on stderr when
// writing failed.
bool emit_report(const std::string& path, bool want_color,
                 const std::function<void(std::ostream&, bool color)>& render, bool say_where = true);

// At start-up: a standard descriptor (0-2) the caller closed gets /dev/null, so no file
// npu-doctor opens takes its number; a closed stdout is remembered as one that cannot be written.
void guard_standard_fds();
// In `run`'s child before exec: closes those descriptors again, so the program starts with what
// the caller gave it (async-signal-safe).
void close_guarded_fds();

// Flushes stdout and checks every write to it succeeded (not closed, no full disk). Returns
// false after printing "npu-doctor: error: cannot write the report to stdout: ..." (exit 2).
bool stdout_written_or_report();

// Before the work that makes a report (a long read, a program run): checks that `path` ("" =
// stdout: nothing to check) can be written, its directory included (AtomicFile::check_writable).
// Returns false after printing "npu-doctor: error: -o: ..." on stderr.
// `inputs` are this command's input files (protect_input): an output naming one of them is
// refused, whatever the spelling. `option` names the output in the message.
bool output_writable_or_report(const std::string& path, const std::vector<std::string>& inputs = {},
                               std::string_view option = "-o");

}  // namespace npud
