// Which installed package a source path belongs to, from the path alone: the readers (Kineto's
// python_function frames) and the analyses (analysis/source_sites.hpp) ask the same question.
#pragma once

#include <string_view>
#include <utility>

namespace npud {

// ("transformers", "models/llama/modeling_llama.py") for a file in site-packages/dist-packages
// (a capture's absolute paths) or a path Kineto shortened relative to sys.path whose first part
// names a known library ("transformers/masking_utils.py"); ("", "") for the program's own.
std::pair<std::string_view, std::string_view> package_of_path(std::string_view path);

// torch's own files (torch, functorch, torchgen, in any spelling): frames no finding anchors at.
bool is_torch_file(std::string_view path);

}  // namespace npud
