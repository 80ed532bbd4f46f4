// Directory listings that never throw. std::filesystem's range-for over a directory iterator
// uses the throwing operator++ even when the iterator was made with an error_code: a folder
// that becomes unreadable mid-listing (or, for the recursive iterator, any unreadable
// subfolder) then aborts the program with an uncaught filesystem_error. Every listing in src/
// goes through these.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace npud {

// The entries of `dir` (not recursive), in the order the OS gives them. On an error `ec` is
// set and the entries read before it are returned.
std::vector<std::filesystem::directory_entry> directory_entries(const std::filesystem::path& dir, std::error_code& ec);

struct UnlistedFolder {
  std::filesystem::path path;
  std::string reason;           // "Permission denied"
};

// Bytes of the regular files under `dir`, recursively (symlinks not followed, at most
// kMaxTreeDepth levels). Folders that cannot be listed (`dir` itself included) are skipped
// and appended to `unlisted`.
inline constexpr int kMaxTreeDepth = 64;
uint64_t tree_bytes(const std::filesystem::path& dir, std::vector<UnlistedFolder>& unlisted);

}  // namespace npud
