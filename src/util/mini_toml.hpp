// A reader for the small part of TOML that npu-doctor's configuration uses. Debian 12 has no
// toml++ or toml11 development package the build already depends on, and the configuration
// needs only: [tables], key = "string" / 'literal', key = ["string", ...] (over several lines,
// with comments and a trailing comma), and inline tables of those ({ "glob" = ["ID"] }).
//
// Only the tables the caller asks for are read that strictly: a pyproject.toml is mostly other
// tools' tables, which may hold any TOML (numbers, multi-line strings, arrays of tables).
// Those are skipped, tracking strings and brackets just far enough to find the next table
// header. Inside a wanted table, anything else (numbers, booleans, dotted keys, multi-line
// strings) is refused with a TomlError naming file:line:column.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace npud {

struct TomlError : std::runtime_error {
  using std::runtime_error::runtime_error;   // "file:line:column: what"
};

struct TomlPos {
  int line = 0, column = 0;
};

struct TomlKeyValue;
using TomlStrings = std::vector<std::string>;
// In file order. A vector of a struct still incomplete here, not of std::pair: a pair needs
// both types complete, which clang with libstdc++ checks (gcc let it pass).
using TomlInlineTable = std::vector<TomlKeyValue>;

struct TomlValue {
  std::variant<std::string, TomlStrings, TomlInlineTable> v;
  TomlPos pos;   // where the value starts
};

struct TomlKeyValue {
  std::string first;   // (pair-like names: read with structured bindings)
  TomlValue second;
};

struct TomlEntry {
  std::string key;
  TomlValue value;
  TomlPos pos;   // where the key starts
};

struct TomlTable {
  std::string name;        // "tool.npu-doctor"; "" for the top level
  TomlPos pos;             // of its header
  std::vector<TomlEntry> entries;
};

// Reads `text` (the contents of `file`, named in errors). `wanted(name)` says which tables
// ("" = the top level) are read; the others are skipped. Returns the wanted tables found, in
// file order. Throws TomlError.
std::vector<TomlTable> read_toml_tables(std::string_view text, const std::string& file,
                                        const std::function<bool(std::string_view table)>& wanted);

}  // namespace npud
