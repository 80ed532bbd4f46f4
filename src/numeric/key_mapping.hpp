// Names of one framework's dump entries in the other's words, so `compare` pairs a MindSpore
// run with a PyTorch one by key rather than by order (docs/compare.md "Two frameworks").
// Two sources, applied to the side whose dump says "mindspore" (or to the target when a mapping
// file is given):
// - msprobe's own fixed renames: "Cell." -> "Module.", "MintFunctional." -> "Functional.",
//   "Mint." -> "Torch." (what `msprobe compare` does before any user mapping);
// - a mapping file in msprobe's data_mapping / cell_mapping YAML: one `name: reference name`
//   per line. A line whose left side is a whole entry key renames that key (data_mapping); any
//   other renames a cell/module path inside `Module.` keys (cell_mapping): whole dot-separated
//   parts of the key, the line first in the file winning, looked up by hash (a 40,000-line
//   mapping costs what a short one does).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace npud {

struct KeyMapping {
  std::string path;  // the mapping file ("" = built-in renames only)
  std::vector<std::pair<std::string, std::string>> pairs;  // file order
  std::unordered_map<std::string, size_t> first;           // a left side -> its first pair

  void add(std::string from, std::string to);
};

// Reads a flat `a: b` YAML file ('#' comments, optional quotes; a regular file of at most
// kMaxMappingBytes: a FIFO or device is refused at once). Throws InputError naming the file and
// the byte offset of a line that is not `name: name`.
inline constexpr uint64_t kMaxMappingBytes = uint64_t(64) << 20;
KeyMapping read_key_mapping(const std::string& path);

// `key` in the reference's words: built-in renames when `builtin`, then the file's.
std::string map_key(const KeyMapping& mapping, const std::string& key, bool builtin);

}  // namespace npud
