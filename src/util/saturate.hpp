// Sums over input numbers (durations, element counts) saturate instead of overflowing: each
// value is range-checked at read time, but a crafted trace can hold millions of them, and
// signed overflow is undefined behaviour (negative axis labels, negative step times, rules
// silently dropping their findings). A saturated sum reads as "at least this much".
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

namespace npud {

template <class T, class U>
  requires std::is_integral_v<T> && std::is_integral_v<U>
constexpr void add_saturating(T& sum, U v) {
  T r;
  if (!__builtin_add_overflow(sum, v, &r)) {
    sum = r;
    return;
  }
  sum = v > 0 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
}

// An estimate in double (count x unit cost) as int64_t nanoseconds, clamped to the range.
constexpr int64_t saturating_ns(double ns) {
  if (!(ns > 0)) return 0;
  if (ns >= double(std::numeric_limits<int64_t>::max())) return std::numeric_limits<int64_t>::max();
  return int64_t(ns);
}

}  // namespace npud
