#include "analysis/intervals.hpp"

#include <algorithm>

namespace npud {

std::vector<Interval> union_of(std::vector<Interval> v) {
  std::erase_if(v, [](const Interval& i) { return i.end <= i.start; });
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.start <= out.back().end) out.back().end = std::max(out.back().end, i.end);
    else out.push_back(i);
  }
  return out;
}

int64_t total_length(std::span<const Interval> merged) {
  int64_t n = 0;
  for (const Interval& i : merged) n += i.length();
  return n;
}

namespace {
// First interval that ends after lo.
std::span<const Interval>::iterator first_after(std::span<const Interval> merged, int64_t lo) {
  return std::upper_bound(merged.begin(), merged.end(), lo,
                          [](int64_t t, const Interval& i) { return t < i.end; });
}
}  // namespace

int64_t covered_within(std::span<const Interval> merged, int64_t lo, int64_t hi) {
  int64_t n = 0;
  for (auto it = first_after(merged, lo); it != merged.end() && it->start < hi; ++it)
    n += std::min(hi, it->end) - std::max(lo, it->start);
  return n;
}

std::vector<Interval> gaps_within(std::span<const Interval> merged, int64_t lo, int64_t hi, int64_t min_len) {
  std::vector<Interval> gaps;
  int64_t cursor = lo;
  auto take = [&](int64_t end) {
    if (end - cursor >= std::max<int64_t>(min_len, 1)) gaps.push_back({cursor, end});
  };
  for (auto it = first_after(merged, lo); it != merged.end() && it->start < hi; ++it) {
    take(std::min(it->start, hi));
    cursor = std::max(cursor, it->end);
  }
  if (cursor < hi) take(hi);
  return gaps;
}

}  // namespace npud
