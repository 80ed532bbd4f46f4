// Files compiled into the binary (rule docs, knowledge data): see cmake/EmbedFiles.cmake.
#pragma once

#include <span>
#include <string_view>

namespace npud {

struct EmbeddedFile {
  std::string_view name;   // file name without directory, e.g. "SYNC001.md"
  std::string_view bytes;
};

std::span<const EmbeddedFile> embedded_rule_docs();
// docs/*.md and docs/formats/*.md, named by their path under docs/ ("formats/dump.md").
std::span<const EmbeddedFile> embedded_topic_docs();
// examples/tiny_gpt/train.py, named "tiny_gpt/train.py": `npu-doctor docs example`.
std::span<const EmbeddedFile> embedded_examples();

// The embedded file called `name`, or an empty view.
std::string_view find_embedded(std::span<const EmbeddedFile> files, std::string_view name);

}  // namespace npud
