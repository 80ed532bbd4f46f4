// The metrics of docs/metrics.md against hand-computed numbers, the fp16/bf16 conversions,
// and results that do not depend on the thread count.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "numeric/half.hpp"
#include "numeric/metrics.hpp"

using namespace npud;

namespace {
template <class T>
TensorView view(const std::vector<T>& v, DType d, bool swapped = false) {
  return TensorView{d, swapped, v.data(), v.size()};
}
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST(NumericHalf, Fp16EveryKindOfValue) {
  EXPECT_EQ(fp16_to_float(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_float(0xC000), -2.0f);
  EXPECT_EQ(fp16_to_float(0x7BFF), 65504.0f);                  // largest normal
  EXPECT_EQ(fp16_to_float(0x0400), std::ldexp(1.0f, -14));     // smallest normal
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));     // smallest subnormal
  EXPECT_EQ(fp16_to_float(0x03FF), 1023 * std::ldexp(1.0f, -24));  // largest subnormal
  EXPECT_EQ(fp16_to_float(0x0200), std::ldexp(1.0f, -15));
  EXPECT_EQ(fp16_to_float(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(std::bit_cast<uint32_t>(fp16_to_float(0x8000)), 0x80000000u);  // -0
  EXPECT_EQ(fp16_to_float(0x7C00), INFINITY);
  EXPECT_EQ(fp16_to_float(0xFC00), -INFINITY);
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7C01)));   // signalling NaN stays NaN
  EXPECT_EQ(fp16_to_float(0x3555), 0.333251953125f);
}

TEST(NumericHalf, Bf16EveryKindOfValue) {
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xC0A0), -5.0f);
  EXPECT_EQ(bf16_to_float(0x7F7F), std::bit_cast<float>(0x7F7F0000u));  // largest finite
  EXPECT_EQ(bf16_to_float(0x0001), std::ldexp(1.0f, -133));             // smallest subnormal
  EXPECT_EQ(bf16_to_float(0x7F80), INFINITY);
  EXPECT_EQ(bf16_to_float(0xFF80), -INFINITY);
  EXPECT_TRUE(std::isnan(bf16_to_float(0x7FC0)));
  EXPECT_TRUE(std::isnan(bf16_to_float(0x7F81)));
}

TEST(NumericMetrics, HandComputed) {
  std::vector<float> r = {1, 2, 0, 4};
  std::vector<double> t = {1, 2.02, 0, 3};
  TensorMetrics m = compute_metrics(view(r, DType::F32), view(t, DType::F64));
  EXPECT_EQ(m.n, 4u);
  EXPECT_EQ(m.finite, 4u);
  // rt = 1 + 4.04 + 0 + 12, rr = 21, tt = 1 + 4.0804 + 9
  ASSERT_TRUE(m.has_cos());
  EXPECT_NEAR(m.cos, 17.04 / std::sqrt(21.0 * 14.0804), 1e-12);
  EXPECT_DOUBLE_EQ(m.max_abs, 1.0);
  EXPECT_DOUBLE_EQ(m.max_rel, 0.25);
  EXPECT_NEAR(m.rmse, std::sqrt((0.02 * 0.02 + 1.0) / 4), 1e-12);
  EXPECT_DOUBLE_EQ(m.gt_1e3, 0.5);   // relative errors 0, 0.01, 0, 0.25
  EXPECT_DOUBLE_EQ(m.gt_5e3, 0.5);
  EXPECT_EQ(m.nan + m.inf + m.nan_ref + m.inf_ref + m.overflow + m.underflow, 0u);
  EXPECT_TRUE(diverges(m, Thresholds{}));
}

TEST(NumericMetrics, RelativeErrorFloorAndUnderflow) {
  // r = 0 divides by 2^-24; r != 0, t == 0 is an underflow.
  std::vector<double> r = {0, 1e-3, 1};
  std::vector<double> t = {std::ldexp(1.0, -25), 0, 1.004};
  TensorMetrics m = compute_metrics(view(r, DType::F64), view(t, DType::F64));
  EXPECT_EQ(m.underflow, 1u);
  EXPECT_DOUBLE_EQ(m.max_rel, 1.0);              // 1e-3 / 1e-3
  EXPECT_DOUBLE_EQ(m.gt_1e3, 1.0);              // relative errors 0.5 (2^-25 / 2^-24), 1, 0.004
  EXPECT_NEAR(m.gt_5e3, 2.0 / 3.0, 1e-15);      // 0.004 is not beyond 5e-3
}

TEST(NumericMetrics, NanInfOverflowCounts) {
  std::vector<double> r = {1, kNan, kInf, 1, 5, -kInf};
  std::vector<double> t = {kNan, 1, 1, kInf, 70000, -kInf};
  TensorMetrics m = compute_metrics(view(r, DType::F64), view(t, DType::F64));
  EXPECT_EQ(m.nan_ref, 1u);
  EXPECT_EQ(m.nan, 1u);
  EXPECT_EQ(m.inf_ref, 2u);
  EXPECT_EQ(m.inf, 2u);
  EXPECT_EQ(m.overflow, 2u);   // r finite and t = inf or |t| > 65504; t NaN is not an overflow
  EXPECT_EQ(m.finite, 1u);     // only (5, 70000)
  EXPECT_DOUBLE_EQ(m.max_abs, 69995.0);
  EXPECT_DOUBLE_EQ(m.gt_5e3, 1.0);
  // Same NaN/Inf totals on both sides and one finite pair pointing the same way (cos 1), but
  // the NaN and the Infs moved (positions 0-3) and the finite pair is 14000x larger: diverges.
  EXPECT_DOUBLE_EQ(m.cos, 1.0);
  EXPECT_EQ(m.nonfinite_mismatch, 4);
  EXPECT_DOUBLE_EQ(m.norm_ratio, 14000.0);
  EXPECT_TRUE(diverges(m, Thresholds{}));
}

// Issue 31 F-14 and its class: what cosine similarity cannot see. Variants of the repro's
// cases with other values, dtypes and sizes.
TEST(NumericMetrics, RescalingIsADivergenceThroughTheNormRatio) {
  std::vector<float> loss_ref = {0.25f}, loss_tgt = {0.5f};  // a scalar that doubled
  TensorMetrics scalar = compute_metrics(view(loss_ref, DType::F32), view(loss_tgt, DType::F32));
  EXPECT_DOUBLE_EQ(scalar.cos, 1.0);
  EXPECT_DOUBLE_EQ(scalar.norm_ratio, 2.0);
  EXPECT_TRUE(diverges(scalar, Thresholds{}));

  std::vector<double> r(1000), up(1000), noise(1000);
  std::mt19937 gen(7);
  std::normal_distribution<double> nd;
  for (size_t i = 0; i < r.size(); ++i) {
    r[i] = nd(gen);
    up[i] = r[i] * 1.01;                              // a uniform 1% rescaling
    int e = std::ilogb(r[i]);
    noise[i] = std::ldexp(std::nearbyint(std::ldexp(r[i], 10 - e)), e - 10);  // fp16's 11 bits
  }
  TensorMetrics scaled = compute_metrics(view(r, DType::F64), view(up, DType::F64));
  EXPECT_GT(scaled.cos, 0.999999);
  EXPECT_NEAR(scaled.norm_ratio, 1.01, 1e-12);
  EXPECT_TRUE(diverges(scaled, Thresholds{}));
  TensorMetrics rounded = compute_metrics(view(r, DType::F64), view(noise, DType::F64));
  EXPECT_NEAR(rounded.norm_ratio, 1.0, 1e-3);
  EXPECT_FALSE(diverges(rounded, Thresholds{}));
  Thresholds loose;
  loose.max_norm_ratio_err = 0.02;
  EXPECT_FALSE(diverges(scaled, loose));
}

TEST(NumericMetrics, Float64ExtremesNeitherOverflowNorUnderflow) {
  // Squares of 7e305 overflow and squares of 3e-250 underflow: scaled sums give the real cos.
  std::vector<double> huge = {7e305, -3e305, 1e305}, flipped = {-7e305, 3e305, -1e305};
  TensorMetrics h = compute_metrics(view(huge, DType::F64), view(flipped, DType::F64));
  ASSERT_TRUE(h.has_cos());
  EXPECT_NEAR(h.cos, -1.0, 1e-12);
  EXPECT_DOUBLE_EQ(h.max_abs, 1.4e306);
  EXPECT_NEAR(h.norm_ratio, 1.0, 1e-12);
  EXPECT_TRUE(std::isfinite(h.rmse));
  EXPECT_TRUE(diverges(h, Thresholds{}));

  std::vector<double> tiny = {0, 3e-250, 0, 0}, moved = {0, 0, 0, 3e-250};
  TensorMetrics t = compute_metrics(view(tiny, DType::F64), view(moved, DType::F64));
  EXPECT_DOUBLE_EQ(t.cos, 0.0);   // orthogonal, not "both norms 0"
  EXPECT_DOUBLE_EQ(t.norm_ratio, 1.0);
  EXPECT_DOUBLE_EQ(t.max_abs, 3e-250);
  EXPECT_TRUE(diverges(t, Thresholds{}));

  std::vector<double> sub = {5e-324, 1e-320}, same = sub;  // subnormals, equal
  TensorMetrics s = compute_metrics(view(sub, DType::F64), view(same, DType::F64));
  EXPECT_NEAR(s.cos, 1.0, 1e-12);
  EXPECT_FALSE(diverges(s, Thresholds{}));
}

TEST(NumericMetrics, NonFiniteValuesComparedBySignAndPosition) {
  std::vector<float> neg = {-INFINITY, 3}, pos = {INFINITY, 3};
  TensorMetrics sign = compute_metrics(view(neg, DType::F32), view(pos, DType::F32));
  EXPECT_EQ(sign.nonfinite_mismatch, 1);
  EXPECT_FALSE(sign.gained_nonfinite());
  EXPECT_TRUE(diverges(sign, Thresholds{}));

  // The NaN moved: same counts on both sides.
  std::vector<double> r = {kNan, 1, 2, 4}, t = {1, kNan, 2, 4};
  TensorMetrics moved = compute_metrics(view(r, DType::F64), view(t, DType::F64));
  EXPECT_EQ(moved.nonfinite_mismatch, 2);
  EXPECT_TRUE(diverges(moved, Thresholds{}));

  // The same NaN, -Inf and +Inf where they were: nothing differs.
  std::vector<double> a = {kNan, -kInf, kInf, 2}, b = {kNan, -kInf, kInf, 2};
  TensorMetrics same = compute_metrics(view(a, DType::F64), view(b, DType::F64));
  EXPECT_EQ(same.nonfinite_mismatch, 0);
  EXPECT_FALSE(diverges(same, Thresholds{}));
}

TEST(NumericMetrics, GainedNanDiverges) {
  std::vector<float> r = {1, 2, 3, 4};
  std::vector<float> t = {1, 2, 3, NAN};
  TensorMetrics m = compute_metrics(view(r, DType::F32), view(t, DType::F32));
  EXPECT_EQ(m.finite, 3u);
  EXPECT_DOUBLE_EQ(m.cos, 1.0);
  EXPECT_TRUE(diverges(m, Thresholds{}));
}

TEST(NumericMetrics, CosEdgeCases) {
  std::vector<float> zeros = {0, 0, 0}, ones = {1, 1, 1}, nans = {NAN, NAN, NAN}, none;
  EXPECT_DOUBLE_EQ(compute_metrics(view(zeros, DType::F32), view(zeros, DType::F32)).cos, 1.0);
  EXPECT_DOUBLE_EQ(compute_metrics(view(zeros, DType::F32), view(ones, DType::F32)).cos, 0.0);
  TensorMetrics all_nan = compute_metrics(view(nans, DType::F32), view(ones, DType::F32));
  EXPECT_FALSE(all_nan.has_cos());
  EXPECT_EQ(all_nan.max_abs, 0.0);
  TensorMetrics empty = compute_metrics(view(none, DType::F32), view(none, DType::F32));
  EXPECT_EQ(empty.n, 0u);
  EXPECT_DOUBLE_EQ(empty.cos, 1.0);
  EXPECT_EQ(empty.rmse, 0.0);
  EXPECT_FALSE(diverges(empty, Thresholds{}));
}

TEST(NumericMetrics, Fp16AndBf16Inputs) {
  std::vector<float> r = {1.0f, 65504.0f, std::ldexp(1.0f, -24), -2.0f, 0.1f};
  std::vector<uint16_t> f16 = {0x3C00, 0x7BFF, 0x0001, 0xC000, 0x2E66};  // 0x2E66 = 0.0999755859375
  TensorMetrics m = compute_metrics(view(r, DType::F32), view(f16, DType::F16));
  EXPECT_EQ(m.finite, 5u);
  EXPECT_NEAR(m.max_abs, double(0.1f) - 0.0999755859375, 1e-12);
  EXPECT_NEAR(m.max_rel, (0.1f - 0.0999755859375) / double(0.1f), 1e-9);
  EXPECT_EQ(m.overflow, 0u);
  std::vector<uint16_t> f16_over = {0x3C00, 0x7C00, 0x0000, 0xC000, 0x2E66};  // inf, and 2^-24 flushed to 0
  TensorMetrics o = compute_metrics(view(r, DType::F32), view(f16_over, DType::F16));
  EXPECT_EQ(o.overflow, 1u);
  EXPECT_EQ(o.inf, 1u);
  EXPECT_EQ(o.underflow, 1u);
  std::vector<uint16_t> bf = {0x3F80, 0x477F, 0x3380, 0xC000, 0x3DCD};  // 1, 65280, 2^-24, -2, 0.10009765625
  TensorMetrics b = compute_metrics(view(r, DType::F32), view(bf, DType::BF16));
  EXPECT_NEAR(b.max_abs, 65504.0 - 65280.0, 1e-9);
  EXPECT_NEAR(b.max_rel, 224.0 / 65504.0, 1e-12);  // 65280 for 65504 beats 0.10009765625 for 0.1
}

TEST(NumericMetrics, IntegerBoolAndByteSwapped) {
  std::vector<int8_t> i8 = {-128, 0, 127};
  std::vector<uint8_t> b = {1, 0, 1};
  std::vector<uint64_t> u64 = {0, 1, 2};
  std::vector<double> d = {-128, 0, 127};
  EXPECT_EQ(compute_metrics(view(d, DType::F64), view(i8, DType::I8)).max_abs, 0.0);
  TensorMetrics mb = compute_metrics(view(b, DType::Bool), view(u64, DType::U64));
  EXPECT_DOUBLE_EQ(mb.max_abs, 1.0);
  EXPECT_EQ(mb.underflow, 1u);  // (1, 0)
  // Big-endian float32 1.5 and -3.0
  std::vector<uint32_t> be = {__builtin_bswap32(std::bit_cast<uint32_t>(1.5f)),
                              __builtin_bswap32(std::bit_cast<uint32_t>(-3.0f))};
  std::vector<float> le = {1.5f, -3.0f};
  TensorMetrics ms = compute_metrics(view(le, DType::F32), TensorView{DType::F32, true, be.data(), 2});
  EXPECT_EQ(ms.max_abs, 0.0);
  EXPECT_DOUBLE_EQ(ms.cos, 1.0);
}

TEST(NumericMetrics, SameResultWhateverTheThreadCount) {
  // Several chunks plus a ragged tail; values with wide exponents so summation order shows.
  const size_t n = 3 * (1 << 16) + 12345;
  std::mt19937_64 rng(42);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> r(n), t(n);
  for (size_t i = 0; i < n; ++i) {
    r[i] = g(rng) * std::ldexp(1.0f, int(i % 40) - 20);
    t[i] = r[i] * (1 + 1e-3f * g(rng));
  }
  t[5] = NAN;
  t[70000] = INFINITY;
  TensorMetrics base = compute_metrics(view(r, DType::F32), view(t, DType::F32), MetricsOptions{1, {}});
  for (unsigned threads : {2u, 3u, 7u, 16u}) {
    SCOPED_TRACE(threads);
    TensorMetrics m = compute_metrics(view(r, DType::F32), view(t, DType::F32), MetricsOptions{threads, {}});
    EXPECT_EQ(m.finite, base.finite);
    EXPECT_EQ(std::bit_cast<uint64_t>(m.cos), std::bit_cast<uint64_t>(base.cos));
    EXPECT_EQ(std::bit_cast<uint64_t>(m.rmse), std::bit_cast<uint64_t>(base.rmse));
    EXPECT_EQ(m.max_abs, base.max_abs);
    EXPECT_EQ(m.max_rel, base.max_rel);
    EXPECT_EQ(m.gt_1e3, base.gt_1e3);
    EXPECT_EQ(m.nan, 1u);
    EXPECT_EQ(m.inf, 1u);
  }
  EXPECT_EQ(base.finite, n - 2);
}

TEST(NumericMetrics, Avx2AndSse2KernelsAgreeBitForBit) {
  // Same lanes, same IEEE operations: the run-time choice of kernel must not show in results.
  const size_t n = 2 * (1 << 16) + 7;
  std::mt19937_64 rng(7);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> r(n), t(n);
  for (size_t i = 0; i < n; ++i) {
    r[i] = g(rng) * std::ldexp(1.0f, int(i % 30) - 15);
    t[i] = i % 1000 == 3 ? 0.0f : r[i] * (1 + 1e-3f * g(rng));
  }
  t[9] = NAN;
  t[100] = -INFINITY;
  MetricsOptions simd, plain;
  simd.threads = plain.threads = 2;
  plain.allow_avx2 = false;
  TensorMetrics a = compute_metrics(view(r, DType::F32), view(t, DType::F32), simd);
  TensorMetrics b = compute_metrics(view(r, DType::F32), view(t, DType::F32), plain);
  EXPECT_EQ(std::bit_cast<uint64_t>(a.cos), std::bit_cast<uint64_t>(b.cos));
  EXPECT_EQ(std::bit_cast<uint64_t>(a.rmse), std::bit_cast<uint64_t>(b.rmse));
  EXPECT_EQ(a.max_abs, b.max_abs);
  EXPECT_EQ(a.max_rel, b.max_rel);
  EXPECT_EQ(a.gt_1e3, b.gt_1e3);
  EXPECT_EQ(a.gt_5e3, b.gt_5e3);
  EXPECT_EQ(a.finite, b.finite);
  EXPECT_EQ(a.underflow, b.underflow);
  EXPECT_EQ(a.nan + a.inf, 2);
}
