// Names of one framework's dump entries in the other's words, so `compare` pairs a MindSpore
// run with a PyTorch one by key rather than by order (docs/compare.md "Two frameworks").
// Two sources, applied to the side whose dump says "mindspore" (or to the target when a mapping
// file is given):
// - msprobe's own fixed renames: "Cell." -> "Module.", "MintFunctional." -> "Functional.",
//   "Mint." -> "Torch." (what `msprobe compare` does before any user mapping);
// - a mapping file in msprobe's data_mapping / cell_mapping YAML: one `name: reference name`
//   per line. A line whose left side is a whole entry key renames that key (data_mapping); any
//   other renames the first occurrence of a cell/module name inside keys (cell_mapping).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace npud {

struct KeyMapping {
  std::string path;  // the mapping file ("" = built-in renames only)
  std::vector<std::pair<std::string, std::string>> pairs;  // file order
};

// Reads a flat `a: b` YAML file ('#' comments, optional quotes). Throws InputError naming the
// file and the byte offset of a line that is not `name: name`.
KeyMapping read_key_mapping(const std::string& path);

// `key` in the reference's words: built-in renames when `builtin`, then the file's.
std::string map_key(const KeyMapping& mapping, const std::string& key, bool builtin);

}  // namespace npud
