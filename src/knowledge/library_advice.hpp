// Levers for findings inside installed packages (data/advice/<package>.tsv, compiled in):
// what the code at a package site does, and the setting the user has that removes the cause
// (a TrainingArguments field, a config field, a collator argument), or how to swap the code
// once when no setting exists. One file per library: a new library is one file. Format in the
// files' headers and docs/library-advice.md.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/embedded.hpp"

namespace npud {

struct LibraryAdvice {
  std::string package;    // "transformers" (the file's name)
  std::string versions;   // "*", ">=4.46", ">=4.40,<5"
  std::string rules;      // "SYNC001", "FUSE001,FUSE005", "*"
  std::string file_glob;  // inside the package: "masking_utils.py", "models/*/modeling_*.py"
  std::string function_glob;
  std::string cause;      // rows of one cause at one program line make one finding
  std::string does;       // what the code at the site does
  std::string lever;      // the fix; "\n" already a line break, {module} not yet filled
  // "[if A|B] lever": the lever exists only for models whose class or config has A or B
  // (`_supports_flash_attn`, `config.hidden_act`): rules/library_findings checks it against the
  // model the capture recorded; "" always.
  std::string condition;
  size_t line = 0;        // in its file, for errors
};

class LibraryAdviceTable {
 public:
  static const LibraryAdviceTable& builtin();
  // Parses one data/advice file; throws KnowledgeError naming the file and line.
  void parse(std::string_view file_name, std::string_view text);
  // The first row for `rule` at a site of `package` (version "" = unknown: any range matches)
  // that `accept` takes (none: every row).
  const LibraryAdvice* find(std::string_view rule, std::string_view package, std::string_view version,
                            std::string_view file, std::string_view function,
                            const std::function<bool(const LibraryAdvice&)>& accept = {}) const;
  const std::vector<LibraryAdvice>& rows() const { return rows_; }

 private:
  std::vector<LibraryAdvice> rows_;
};

// "*", ">=4.46", "<5", ">=4.40,<5.0" against "5.17.0"; an empty version matches any range.
bool version_in_range(std::string_view version, std::string_view range);
// fnmatch-style: '*' any run of characters (across '/'), '?' one character.
bool glob_match(std::string_view pattern, std::string_view text);

std::span<const EmbeddedFile> embedded_advice();

}  // namespace npud
