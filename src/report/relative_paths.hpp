// `run` and `amp-check` name the program's files by the absolute paths Python recorded, while
// `scan` names them as the user typed them: the text reports of the launching commands say
// them relative to the working directory when they are under it (JSON and HTML keep them; SARIF
// says them relative to the project root, report/sarif.hpp).
#pragma once

#include <string>
#include <string_view>

#include "pipeline/report.hpp"

namespace npud {

// `text` with every "DIR/" removed (DIR: absolute, without a trailing '/'); a DIR of "/" or ""
// leaves it as it is.
std::string without_dir_prefix(std::string_view text, std::string_view dir);

// Applies without_dir_prefix to every path the text report prints: the findings' files,
// messages, fixes and notes, the report's notes and its input.
void shorten_paths_under(Report& report, std::string_view dir);

}  // namespace npud
