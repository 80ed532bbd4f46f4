// IEEE fp16 and bfloat16 to float conversion, exact for every bit pattern (subnormals,
// signed zeros, infinities, NaN payloads), without relying on compiler half types.
#pragma once

#include <bit>
#include <cstdint>

namespace npud {

inline float bf16_to_float(uint16_t h) {
  // bf16 is the upper half of an fp32: widening is exact, NaN stays NaN.
  return std::bit_cast<float>(uint32_t(h) << 16);
}

inline float fp16_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // Inf, or NaN with its payload
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);  // normal: rebias 15 -> 127
  } else if (mant == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal: value = mant * 2^-24; normalise the mantissa into an fp32 normal.
    int shift = std::countl_zero(mant) - 21;  // leading zeros within the 10-bit field
    mant = (mant << shift) & 0x3ffu;
    bits = sign | (uint32_t(113 - shift) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

}  // namespace npud
