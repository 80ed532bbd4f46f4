// Applying a file's exact fixes, and showing them as a unified diff that `patch -p1` applies.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/finding.hpp"

namespace npud {

// Edits sorted by position; an edit overlapping one before it is dropped (the next scan
// reports what is left). `applied` receives the edits actually used, in order.
std::string apply_edits(std::string_view text, std::vector<TextEdit> edits, std::vector<TextEdit>* applied = nullptr);

// The fixes of `findings` (edits of findings that have them).
std::vector<TextEdit> collect_edits(const std::vector<Finding>& findings);

// A unified diff (3 lines of context) from `old_text` to `new_text`, with headers
// "--- a/<path>" and "+++ b/<path>" (apply with `patch -p1`). "" if nothing changes.
std::string unified_diff(std::string_view path, std::string_view old_text, std::string_view new_text);

// Where each line of `new_text` (0-based) comes from in `old_text`, by the alignment
// unified_diff shows: an unchanged line (`same`) maps to its old line; a changed or added line
// to the old line of its hunk it replaces (the line it was inserted before, when none).
struct LineOrigin {
  size_t old_line = 0;
  bool same = false;
};
std::vector<LineOrigin> line_origins(std::string_view old_text, std::string_view new_text);

// The path a diff header names for `path`, so that `patch -p1` run in `cwd` applies the diff:
// relative to cwd when the file is under it; otherwise the absolute path without its leading
// '/' (patch refuses absolute names and '..'), which `patch -d / -p1` applies.
std::string diff_header_path(const std::string& path, const std::string& cwd);

}  // namespace npud
