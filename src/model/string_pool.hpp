// Interned strings: each distinct string is stored once and named by a 32-bit id.
// Traces repeat the same few thousand op/kernel names millions of times, so this is
// what keeps the event model small. Id 0 is always the empty string.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace npud {

using StrId = uint32_t;

class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) noexcept = default;
  StringPool& operator=(StringPool&&) noexcept = default;

  StrId intern(std::string_view s);
  // Id of s if already interned, else kMissing.
  StrId find(std::string_view s) const;
  std::string_view view(StrId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }
  size_t bytes() const { return arena_bytes_; }

  static constexpr StrId kMissing = 0xFFFFFFFFu;

 private:
  std::string_view store(std::string_view s);

  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_cap_ = 0;
  size_t arena_bytes_ = 0;
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, StrId> index_;
};

}  // namespace npud
