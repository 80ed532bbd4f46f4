// Tensor dump directories (docs/formats/dump.md): npu-doctor's own dumps (index.jsonl +
// tensors/), plain trees of .npy and torch.save .pt files, and msprobe dumps (dump.json,
// statistics or tensor task, tensors in .npy or .pt files). Each becomes one list of entries
// in dump order; tensor files are located and checked to stay inside the dump directory (a
// plain tree's .npy headers and .pt pickles are read for shapes), their data is not read here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npud {

// A plain tree is an "npy-tree" when it holds any .npy file, a "pt-tree" when only .pt files.
enum class DumpLayout { Ours, NpyTree, PtTree, Msprobe };
std::string_view layout_name(DumpLayout l);  // "npu-doctor", "npy-tree", "pt-tree", "msprobe"

struct DumpFrame {
  std::string file;
  int64_t line = 0;
  std::string function;
};

// msprobe's per-tensor statistics (absent ones stay nullopt: bool tensors have no Mean/Norm).
struct TensorStats {
  std::optional<double> max, min, mean, norm;
};

struct DumpEntry {
  std::string key;       // the matching key
  std::string kind;      // "module", "op" or "tensor" (plain trees)
  std::string name;      // module path, op name, msprobe entry, or relative file path (and the tensor's
                         // name inside a .pt file holding several: "model.pt:fc1.weight")
  std::string io;        // "input", "kwarg", "output" ("" for plain trees)
  std::string arg;       // argument index (or kwarg name)
  std::string group;     // entries may be paired by order only within one group (and shape)
  std::string dtype;     // normalised: "float16", "bfloat16", "float32", "int64", "bool", ...
  std::vector<int64_t> shape;
  std::string file;      // tensor file: relative while parsing, absolute after read_dump; "" = none
  std::string member;    // the tensor inside a .pt file holding several ("" = the file's only tensor)
  std::vector<DumpFrame> stack;  // innermost first
  std::optional<TensorStats> stats;
  uint64_t offset = 0;   // where the entry starts in its index file (for errors)
};

struct Dump {
  DumpLayout layout = DumpLayout::Ours;
  std::string path;        // what the user named
  std::string root;        // directory tensor files are relative to (canonical)
  std::string index;       // the index file read (index.jsonl, dump.json), "" for plain trees
  std::string task;        // msprobe: "statistics" or "tensor"; ours: "tensor"
  std::string framework;   // msprobe: "pytorch", "mindspore"; ours: the torch version line
  std::vector<DumpEntry> entries;
  std::vector<std::string> notes;   // non-fatal things the reader wants the user to know
  bool statistics_only() const { return task == "statistics"; }
};

// Detects the layout of `path` (a directory, or an index.jsonl / dump.json file) and reads
// it. Throws InputError (file + byte offset) for anything malformed or unsafe.
Dump read_dump(const std::string& path);

// The index parsers on a buffer (also the fuzzers' entry points). `name` is used in errors;
// entries' `file` stays relative (checked lexically: no absolute paths, no '..').
void parse_index_jsonl(std::string_view text, const std::string& name, Dump& out);
void parse_msprobe_json(std::string_view text, const std::string& name, Dump& out);
// msprobe's stack.json (entry -> "File X, line N, in f, \n code" strings): attaches stacks.
void parse_msprobe_stack(std::string_view text, const std::string& name, Dump& out);

// Why a run's --dump holds no tensor, from the reason the shim wrote in the index header
// ("ModuleNotFoundError: No module named 'numpy'"), with what to do about it.
std::string dump_not_started_message(std::string_view reason);

// What a run's report says about its --dump folder `dir` (CAPTURE_DIR/dump): "" when it holds
// tensors `compare` can read, else why not (not started, no index, nothing matched); the
// notes of a dump that stopped early are appended.
std::string dump_problem(const std::string& dir);

// Checks a relative path from an index lexically: not empty, not absolute, no '..' part.
// Throws InputError(name, offset) otherwise.
void check_relative_path(const std::string& rel, const std::string& name, uint64_t offset);

}  // namespace npud
