// `npu-doctor completion bash|zsh|fish`: a shell completion script generated from the CLI's
// own table of commands and options, so it never lists an option the binary lacks.
#pragma once

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace npud {

// The script for `shell` ("bash", "zsh", "fish"); "" for another shell.
std::string completion_script(const CLI::App& app, std::string_view shell);

void add_completion_command(CLI::App& app, int& exit_code);

}  // namespace npud
