// The static scan: finds Python files, parses each with tree-sitter (in parallel), runs the
// source rules in one walk of the tree, and honours the suppression comments of
// source/suppressions.hpp (`# npu-doctor: ignore[...]`, `# noqa: ID`, `ignore-file[...]`).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "knowledge/knowledge.hpp"
#include "model/rule_filter.hpp"
#include "model/finding.hpp"
#include "source/source_rules.hpp"

namespace npud {

// False when the build had no tree-sitter grammar (NPUD_SCAN off or unavailable).
bool scan_available();

struct ScanOptions {
  const KnowledgeVersion* version = nullptr;  // nullptr: the newest release
  RuleFilter filter;
  unsigned threads = 0;                       // 0: one per hardware thread
  bool keep_text = false;                     // keep each file's text (for --fix / --diff)
  size_t piece_bytes = size_t(1) << 20;       // parse larger files in pieces of this size
};

enum class FileStatus { Scanned, Binary, NotUtf8, TooLarge, ReadError };

struct FileResult {
  std::string path;
  FileStatus status = FileStatus::Scanned;
  std::string note;            // why it was skipped
  std::string encoding;        // its PEP 263 coding cookie when not UTF-8 ("latin-1"); text is UTF-8
  size_t bytes = 0, lines = 0;
  bool syntax_error = false;   // PARSE001 reported; its other findings carry no edits
  std::vector<Finding> findings;  // by line, column, rule
  size_t suppressed = 0;       // findings silenced by comments (source/suppressions.hpp)
  std::string text;            // when keep_text
};

// Directory walk: *.py under directories (skipping .git, __pycache__, node_modules,
// site-packages, venv, .venv and any directory with a pyvenv.cfg), plus files named directly.
// Sorted, without duplicates. Throws std::runtime_error for a path that does not exist.
// `notes` receives one line per skipped virtualenv / package tree.
std::vector<std::string> collect_python_files(const std::vector<std::string>& paths, std::vector<std::string>& notes);

// Sources over this are skipped (FileStatus::TooLarge); `scan -` stops reading stdin past it.
inline constexpr size_t kMaxSourceBytes = size_t(1) << 28;

// Scan one file's UTF-8 text (checks NUL bytes and UTF-8 first; scan_files converts files
// with another coding cookie). CR-only line ends are read as Python reads them.
FileResult scan_source(std::string path, std::string text, const ScanOptions& opts);
// Read and scan files in parallel; results in the order of `files`.
std::vector<FileResult> scan_files(const std::vector<std::string>& files, const ScanOptions& opts);

// Byte offset of the first invalid UTF-8 sequence, or npos.
size_t first_invalid_utf8(std::string_view s);

}  // namespace npud
