#include "ingest/decimal_time.hpp"

#include <limits>

namespace npud {

DecimalStatus parse_us_to_ns(std::string_view s, int64_t& out) {
  size_t i = 0, n = s.size();
  while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  while (n > i && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r')) --n;
  bool neg = false;
  if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  auto digit = [&](size_t k) { return k < n && s[k] >= '0' && s[k] <= '9'; };
  size_t int_begin = i;
  while (digit(i)) ++i;
  size_t int_end = i;
  size_t frac_begin = i, frac_end = i;
  if (i < n && s[i] == '.') {
    frac_begin = ++i;
    while (digit(i)) ++i;
    frac_end = i;
  }
  if (int_end == int_begin && frac_end == frac_begin) return DecimalStatus::Invalid;
  int64_t exp = 0;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
    if (!digit(i)) return DecimalStatus::Invalid;
    while (digit(i)) {
      if (exp < 100000) exp = exp * 10 + (s[i] - '0');  // saturate: the result is 0 or out of range anyway
      ++i;
    }
    if (eneg) exp = -exp;
  }
  if (i != n) return DecimalStatus::Invalid;

  // Digits d[0..len) = integer digits then fraction digits; the value is
  // 0.d[0]d[1]... * 10^point with point counted in nanoseconds (+3 for us -> ns).
  auto digit_at = [&](int64_t k) -> int {
    int64_t ilen = int64_t(int_end - int_begin);
    if (k < ilen) return s[int_begin + size_t(k)] - '0';
    k -= ilen;
    if (k < int64_t(frac_end - frac_begin)) return s[frac_begin + size_t(k)] - '0';
    return 0;
  };
  const int64_t total = int64_t(int_end - int_begin) + int64_t(frac_end - frac_begin);
  const int64_t point = int64_t(int_end - int_begin) + exp + 3;
  // skip leading zeros
  int64_t k = 0;
  while (k < total && k < point && digit_at(k) == 0) ++k;
  unsigned __int128 v = 0;
  const unsigned __int128 limit = static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max()) + 1;
  for (; k < point; ++k) {
    v = v * 10 + unsigned(digit_at(k));
    if (v > limit) return DecimalStatus::OutOfRange;
    if (k >= total && v == 0) break;  // value is zero, the rest is padding zeros
  }
  // round half away from zero on the first dropped digit
  if (point >= 0 && point < total && digit_at(point) >= 5) ++v;
  if (!neg && v > limit - 1) return DecimalStatus::OutOfRange;
  if (neg && v > limit) return DecimalStatus::OutOfRange;
  if (neg) out = v == limit ? std::numeric_limits<int64_t>::min() : -int64_t(v);
  else out = int64_t(v);
  return DecimalStatus::Ok;
}

}  // namespace npud
