#include "util/directory.hpp"

namespace npud {

namespace fs = std::filesystem;

std::vector<fs::directory_entry> directory_entries(const fs::path& dir, std::error_code& ec) {
  std::vector<fs::directory_entry> out;
  ec.clear();
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) out.push_back(*it);
  return out;
}

namespace {

void add_tree_bytes(const fs::path& dir, int depth, uint64_t& bytes, std::vector<UnlistedFolder>& unlisted) {
  std::error_code ec;
  std::vector<fs::directory_entry> entries = directory_entries(dir, ec);
  if (ec) unlisted.push_back({dir, ec.message()});
  for (const fs::directory_entry& e : entries) {
    std::error_code entry_ec;
    if (e.is_symlink(entry_ec)) continue;
    if (e.is_directory(entry_ec)) {
      if (depth < kMaxTreeDepth) add_tree_bytes(e.path(), depth + 1, bytes, unlisted);
    } else if (e.is_regular_file(entry_ec)) {
      uint64_t size = e.file_size(entry_ec);
      if (!entry_ec) bytes += size;
    }
  }
}

}  // namespace

uint64_t tree_bytes(const fs::path& dir, std::vector<UnlistedFolder>& unlisted) {
  uint64_t bytes = 0;
  add_tree_bytes(dir, 0, bytes, unlisted);
  return bytes;
}

}  // namespace npud
