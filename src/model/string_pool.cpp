#include "model/string_pool.hpp"

#include <algorithm>
#include <cstring>

namespace npud {

namespace {
constexpr size_t kBlockSize = 64 * 1024;
}

StringPool::StringPool() {
  views_.emplace_back();
  index_.emplace(std::string_view{}, 0);
}

std::string_view StringPool::store(std::string_view s) {
  if (s.size() > block_cap_ - block_used_) {
    size_t cap = std::max(kBlockSize, s.size());
    blocks_.push_back(std::make_unique<char[]>(cap));
    block_cap_ = cap;
    block_used_ = 0;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  arena_bytes_ += s.size();
  return {dst, s.size()};
}

StrId StringPool::intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  std::string_view owned = store(s);
  auto id = static_cast<StrId>(views_.size());
  views_.push_back(owned);
  index_.emplace(owned, id);
  return id;
}

StrId StringPool::find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? kMissing : it->second;
}

}  // namespace npud
