// Interval arithmetic on [start, end) time ranges: the union of busy intervals and the
// gaps between them. Device idle time and busy shares are computed from these.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace npud {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;   // exclusive
  int64_t length() const { return end - start; }
};

// Sorted, non-overlapping, non-empty intervals covering exactly what the inputs cover.
std::vector<Interval> union_of(std::vector<Interval> intervals);

// Total length of a union (as returned by union_of).
int64_t total_length(std::span<const Interval> merged);

// How much of [lo, hi) the union covers.
int64_t covered_within(std::span<const Interval> merged, int64_t lo, int64_t hi);

// The parts of [lo, hi) the union does not cover, keeping those at least min_len long.
std::vector<Interval> gaps_within(std::span<const Interval> merged, int64_t lo, int64_t hi, int64_t min_len = 1);

}  // namespace npud
