// The configuration file (docs/configuration.md): `[tool.npu-doctor]` in pyproject.toml or the
// top level of npu-doctor.toml, found by walking up from the first input (the working
// directory for run and amp-check). The nearest folder that has one wins; in one folder
// npu-doctor.toml wins over pyproject.toml, and a pyproject.toml without the table does not
// count (as ruff does). Options given on the command line replace the file's value of the
// same key.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "source/suppressions.hpp"

namespace npud {

struct AnalyzeOptions;

struct Config {
  std::string file;                  // the file read; "" = none found
  std::vector<std::string> select;   // rule ids or prefixes, upper case
  std::vector<std::string> ignore;
  std::string fail_on;               // "" = not set
  std::string torch_npu;
  PathIgnores per_file_ignores;      // base = the file's folder
};

// Reads one configuration file. Throws TomlError ("file:line:column: what") for anything it
// does not read: unknown keys, other value types, rule ids that match no npu-doctor rule.
Config read_config_file(const std::string& path);

// The configuration for an input path (a file or a folder): the nearest one walking up.
Config find_config(const std::string& start);

// --config FILE / --no-config, which every command that reads the configuration has.
struct ConfigChoice {
  std::string file;   // --config: this file, not the nearest one ("" = look for one)
  bool none = false;  // --no-config: no file at all
};
void add_config_options(CLI::App& cmd, ConfigChoice& choice);

// The configuration `choice` names, else the nearest one above `start`. Throws TomlError (a
// --config file that cannot be read, or a pyproject.toml without [tool.npu-doctor]).
Config load_config(const ConfigChoice& choice, const std::string& start);

// For analyze/run/amp-check/diff: finds the configuration from `start` and sets each option the
// command line did not give. `use_select`: false for amp-check, whose own default (the AMP
// rules) only --select changes. False after printing the error.
bool apply_config_or_report(const CLI::App& cmd, const std::string& start, AnalyzeOptions& ao, bool use_select = true);

}  // namespace npud
