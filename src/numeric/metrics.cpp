#include "numeric/metrics.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "numeric/half.hpp"

namespace npud {

namespace {

// Chunk size in elements: fixed, so the summation order never depends on the thread count.
constexpr uint64_t kChunk = 1 << 16;
// Elements are converted to float64 in blocks this long, then measured.
constexpr size_t kBlock = 2048;
// fp16's smallest subnormal: the relative error's floor for the reference's magnitude.
constexpr double kRelFloor = 0x1p-24;
constexpr double kFp16Max = 65504.0;

inline uint16_t bswap(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t bswap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t bswap(uint64_t v) { return __builtin_bswap64(v); }

template <class T, bool Swap>
inline T load_raw(const unsigned char* p, uint64_t i) {
  if constexpr (Swap && sizeof(T) > 1) {
    using U = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
    U u;
    std::memcpy(&u, p + i * sizeof(T), sizeof(T));
    return std::bit_cast<T>(bswap(u));
  } else {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return v;
  }
}

template <bool Swap>
[[gnu::always_inline]] inline void convert(const TensorView& v, uint64_t start, size_t m, double* out) {
  const auto* p = static_cast<const unsigned char*>(v.data);
  switch (v.dtype) {
    case DType::F16:
      for (size_t i = 0; i < m; ++i) out[i] = fp16_to_float(load_raw<uint16_t, Swap>(p, start + i));
      break;
    case DType::BF16:
      for (size_t i = 0; i < m; ++i) out[i] = bf16_to_float(load_raw<uint16_t, Swap>(p, start + i));
      break;
    case DType::F32:
      for (size_t i = 0; i < m; ++i) out[i] = load_raw<float, Swap>(p, start + i);
      break;
    case DType::F64:
      for (size_t i = 0; i < m; ++i) out[i] = load_raw<double, Swap>(p, start + i);
      break;
    case DType::I8:
      for (size_t i = 0; i < m; ++i) out[i] = load_raw<int8_t, Swap>(p, start + i);
      break;
    case DType::I16:
      for (size_t i = 0; i < m; ++i) out[i] = load_raw<int16_t, Swap>(p, start + i);
      break;
    case DType::I32:
      for (size_t i = 0; i < m; ++i) out[i] = load_raw<int32_t, Swap>(p, start + i);
      break;
    case DType::I64:
      for (size_t i = 0; i < m; ++i) out[i] = double(load_raw<int64_t, Swap>(p, start + i));
      break;
    case DType::U8:
      for (size_t i = 0; i < m; ++i) out[i] = load_raw<uint8_t, Swap>(p, start + i);
      break;
    case DType::U16:
      for (size_t i = 0; i < m; ++i) out[i] = load_raw<uint16_t, Swap>(p, start + i);
      break;
    case DType::U32:
      for (size_t i = 0; i < m; ++i) out[i] = load_raw<uint32_t, Swap>(p, start + i);
      break;
    case DType::U64:
      for (size_t i = 0; i < m; ++i) out[i] = double(load_raw<uint64_t, Swap>(p, start + i));
      break;
    case DType::Bool:
      for (size_t i = 0; i < m; ++i) out[i] = p[start + i] != 0 ? 1.0 : 0.0;
      break;
    case DType::Unknown:
    case DType::C64:
    case DType::C128:   // no dump reader makes a view of these
      for (size_t i = 0; i < m; ++i) out[i] = std::numeric_limits<double>::quiet_NaN();
      break;
  }
}

[[gnu::always_inline]] inline void convert_any(const TensorView& v, uint64_t start, size_t m, double* out) {
  if (v.byte_swapped) convert<true>(v, start, m, out);
  else convert<false>(v, start, m, out);
}

// One chunk's (or the whole tensor's) running totals.
struct Partial {
  double rt = 0, rr = 0, tt = 0, dd = 0;
  double max_abs = 0, max_rel = 0;
  double max_r = 0, max_t = 0;  // largest finite |value| of each side, unscaled
  uint64_t finite = 0, gt1 = 0, gt5 = 0;
  uint64_t nan_r = 0, nan_t = 0, inf_r = 0, inf_t = 0, ovf = 0, unf = 0, mis = 0;

  void add(const Partial& o) {
    rt += o.rt; rr += o.rr; tt += o.tt; dd += o.dd;
    max_abs = std::max(max_abs, o.max_abs);
    max_rel = std::max(max_rel, o.max_rel);
    max_r = std::max(max_r, o.max_r);
    max_t = std::max(max_t, o.max_t);
    finite += o.finite; gt1 += o.gt1; gt5 += o.gt5;
    nan_r += o.nan_r; nan_t += o.nan_t; inf_r += o.inf_r; inf_t += o.inf_t; ovf += o.ovf; unf += o.unf;
    mis += o.mis;
  }
};

// Element i of a chunk goes to lane i % 4, whose sums are kept in order: four independent
// accumulators that are combined in lane order at the end, so the result depends on the data
// alone. Non-finite pairs take part as (0, 0), which adds exact zeros, so no branch is needed.
// The lanes live in W-wide vectors: W = 2 (SSE2, every x86-64) or W = 4 (AVX2, chosen at run
// time). Each lane sees the same IEEE operations in the same order either way (no FMA), so
// both give bit-identical results.
constexpr int kLanes = 4;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"   // 32-byte vectors only ever live inside AVX2 code
template <int W> struct Vec;
template <> struct Vec<2> {
  using d = double __attribute__((vector_size(16)));
  using i = int64_t __attribute__((vector_size(16)));
};
template <> struct Vec<4> {
  using d = double __attribute__((vector_size(32)));
  using i = int64_t __attribute__((vector_size(32)));
};

template <int W>
struct Lanes {
  using vd = typename Vec<W>::d;
  using vi = typename Vec<W>::i;
  vd rt{}, rr{}, tt{}, dd{}, max_abs{}, max_rel{}, max_r{}, max_t{};
  vi finite{}, gt1{}, gt5{}, nan_r{}, nan_t{}, inf_r{}, inf_t{}, ovf{}, unf{}, mis{};

  // Copies sub-lane k of `from` into this one (the ragged tail keeps the lanes it did not touch).
  void keep_lane(const Lanes& from, int k) {
    rt[k] = from.rt[k]; rr[k] = from.rr[k]; tt[k] = from.tt[k]; dd[k] = from.dd[k];
    max_abs[k] = from.max_abs[k]; max_rel[k] = from.max_rel[k]; finite[k] = from.finite[k];
    gt1[k] = from.gt1[k]; gt5[k] = from.gt5[k]; nan_r[k] = from.nan_r[k]; nan_t[k] = from.nan_t[k];
    inf_r[k] = from.inf_r[k]; inf_t[k] = from.inf_t[k]; ovf[k] = from.ovf[k]; unf[k] = from.unf[k];
    max_r[k] = from.max_r[k]; max_t[k] = from.max_t[k]; mis[k] = from.mis[k];
  }
  Partial lane(int k) const {
    Partial p;
    p.rt = rt[k]; p.rr = rr[k]; p.tt = tt[k]; p.dd = dd[k];
    p.max_abs = max_abs[k]; p.max_rel = max_rel[k];
    p.finite = uint64_t(finite[k]); p.gt1 = uint64_t(gt1[k]); p.gt5 = uint64_t(gt5[k]);
    p.nan_r = uint64_t(nan_r[k]); p.nan_t = uint64_t(nan_t[k]);
    p.inf_r = uint64_t(inf_r[k]); p.inf_t = uint64_t(inf_t[k]);
    p.ovf = uint64_t(ovf[k]); p.unf = uint64_t(unf[k]);
    p.max_r = max_r[k]; p.max_t = max_t[k]; p.mis = uint64_t(mis[k]);
    return p;
  }
};

// Adds W elements (one per lane); comparisons give -1 where true, so counts subtract. The
// sums, differences and relative errors use the values times `scale` (a power of two, 1 unless
// float64 extremes would overflow or underflow their squares: compute_metrics); the counts
// use the values as they are.
template <int W>
[[gnu::always_inline]] inline void measure(Lanes<W>& L, typename Vec<W>::d r, typename Vec<W>::d t, double scale) {
  using vd = typename Vec<W>::d;
  using vi = typename Vec<W>::i;
  const vi abs_mask = vi{} + INT64_MAX;
  const vd inf = vd{} + INFINITY;
  const vd zero{};
  const vd fp16_max = vd{} + kFp16Max;
  const vd floor = vd{} + kRelFloor * scale;
  const vd sc = vd{} + scale;
  const vd e3 = vd{} + 1e-3, e53 = vd{} + 5e-3;
  vd ar = (vd)((vi)r & abs_mask), at = (vd)((vi)t & abs_mask);
  vi fr = ar < inf, ft = at < inf;  // false for NaN too
  L.nan_r -= r != r;
  L.nan_t -= t != t;
  L.inf_r -= ar == inf;
  L.inf_t -= at == inf;
  L.ovf -= fr & (at > fp16_max);     // |t| > 65504 includes +-Inf, excludes NaN
  L.unf -= (r != zero) & (t == zero);
  // Not the same kind among NaN, +Inf, -Inf: the classes exclude each other, so one differing
  // test is a differing kind (finite vs finite never counts).
  L.mis -= ((r != r) ^ (t != t)) | ((r == inf) ^ (t == inf)) | ((r == -inf) ^ (t == -inf));
  vi both = fr & ft;
  vd fin_r = (vd)((vi)ar & fr), fin_t = (vd)((vi)at & ft);
  L.max_r = fin_r > L.max_r ? fin_r : L.max_r;
  L.max_t = fin_t > L.max_t ? fin_t : L.max_t;
  vd r0 = (vd)((vi)r & both) * sc, t0 = (vd)((vi)t & both) * sc;
  vd d = t0 - r0;
  vd ad = (vd)((vi)d & abs_mask);
  vd ar0 = (vd)((vi)r0 & abs_mask);
  vd rel = ad / (ar0 > floor ? ar0 : floor);
  L.finite -= both;
  L.rt += r0 * t0;
  L.rr += r0 * r0;
  L.tt += t0 * t0;
  L.dd += d * d;
  L.max_abs = ad > L.max_abs ? ad : L.max_abs;
  L.max_rel = rel > L.max_rel ? rel : L.max_rel;
  L.gt1 -= rel > e3;
  L.gt5 -= rel > e53;
}

// L[j] holds lanes j*W .. j*W+W-1.
template <int W>
[[gnu::always_inline]] inline void measure_block(const double* r, const double* t, size_t m, Lanes<W>* L,
                                                 double scale) {
  using vd = typename Vec<W>::d;
  size_t full = m / kLanes * kLanes;
  for (size_t i = 0; i < full; i += kLanes) {
    for (int j = 0; j < kLanes / W; ++j) {
      vd rv, tv;
      std::memcpy(&rv, r + i + j * W, sizeof rv);
      std::memcpy(&tv, t + i + j * W, sizeof tv);
      measure<W>(L[j], rv, tv, scale);
    }
  }
  // Ragged end of the tensor: each remaining element goes to its own lane, the others stay.
  for (size_t k = 0; full + k < m; ++k) {
    Lanes<W>& lanes = L[k / W];
    Lanes<W> before = lanes;
    vd rv{}, tv{};
    rv[k % W] = r[full + k];
    tv[k % W] = t[full + k];
    measure<W>(lanes, rv, tv, scale);
    for (int other = 0; other < W; ++other)
      if (other != int(k % W)) lanes.keep_lane(before, other);
  }
}

template <int W>
[[gnu::always_inline]] inline Partial measure_chunk_w(const TensorView& ref, const TensorView& target, uint64_t begin,
                                                      uint64_t end, double scale) {
  Lanes<W> lanes[kLanes / W];
  alignas(32) double rbuf[kBlock], tbuf[kBlock];
  for (uint64_t at = begin; at < end; at += kBlock) {
    size_t m = size_t(std::min<uint64_t>(kBlock, end - at));
    convert_any(ref, at, m, rbuf);
    convert_any(target, at, m, tbuf);
    measure_block<W>(rbuf, tbuf, m, lanes, scale);  // kBlock is a multiple of 4: lane = index in chunk % 4
  }
  Partial out = lanes[0].lane(0);
  for (int lane = 1; lane < kLanes; ++lane) out.add(lanes[lane / W].lane(lane % W));
  return out;
}

Partial measure_chunk_sse2(const TensorView& ref, const TensorView& target, uint64_t begin, uint64_t end,
                           double scale) {
  return measure_chunk_w<2>(ref, target, begin, end, scale);
}

#if defined(__x86_64__)
[[gnu::target("avx2")]] Partial measure_chunk_avx2(const TensorView& ref, const TensorView& target, uint64_t begin,
                                                   uint64_t end, double scale) {
  return measure_chunk_w<4>(ref, target, begin, end, scale);
}

// CPUID and XGETBV directly, not __builtin_cpu_supports: that one needs libgcc's or
// compiler-rt's __cpu_model, which zig's runtime (the release wheels) does not carry.
bool cpu_has_avx2() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX)) return false;
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 6) != 6) return false;  // the OS saves the SSE and AVX registers
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
}
#endif
#pragma GCC diagnostic pop

using ChunkFn = Partial (*)(const TensorView&, const TensorView&, uint64_t, uint64_t, double);

// Two lanes per vector elsewhere (aarch64's NEON registers are 128 bits): the same sums in the
// same order, so every architecture gives the same metrics.
ChunkFn chunk_function([[maybe_unused]] bool allow_avx2) {
#if defined(__x86_64__)
  static const bool has_avx2 = cpu_has_avx2();
  if (allow_avx2 && has_avx2) return measure_chunk_avx2;
#endif
  return measure_chunk_sse2;
}

// p's sums are of the values times `scale`.
TensorMetrics finish(const Partial& p, uint64_t n, double scale) {
  TensorMetrics m;
  m.n = n;
  m.finite = p.finite;
  m.nan_ref = p.nan_r;
  m.nan = p.nan_t;
  m.inf_ref = p.inf_r;
  m.inf = p.inf_t;
  m.overflow = p.ovf;
  m.underflow = p.unf;
  m.nonfinite_mismatch = int64_t(p.mis);
  if (n == 0) {
    m.cos = 1.0;
    return m;
  }
  if (p.finite == 0) return m;  // cos stays null, errors 0
  double nr = std::sqrt(p.rr), nt = std::sqrt(p.tt);
  if (nr == 0 && nt == 0) m.cos = 1.0;
  else if (nr == 0 || nt == 0) m.cos = 0.0;
  else m.cos = p.rt / (nr * nt);
  if (nr == 0) m.norm_ratio = nt == 0 ? 1.0 : INFINITY;
  else m.norm_ratio = nt / nr;
  m.max_abs = p.max_abs / scale;
  m.max_rel = p.max_rel;
  m.rmse = std::sqrt(p.dd / double(p.finite)) / scale;
  m.gt_1e3 = double(p.gt1) / double(p.finite);
  m.gt_5e3 = double(p.gt5) / double(p.finite);
  return m;
}

}  // namespace

namespace {

Partial measure_all(const TensorView& ref, const TensorView& target, const MetricsOptions& opts, double scale) {
  const uint64_t n = ref.count;
  const uint64_t chunks = (n + kChunk - 1) / kChunk;
  unsigned threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = unsigned(std::min<uint64_t>(threads, chunks));
  std::vector<Partial> partials(chunks);
  const ChunkFn measure_chunk = chunk_function(opts.allow_avx2);
  std::atomic<uint64_t> next{0}, done{0};
  auto work = [&] {
    for (uint64_t c; (c = next.fetch_add(1)) < chunks;) {
      partials[c] = measure_chunk(ref, target, c * kChunk, std::min(n, (c + 1) * kChunk), scale);
      done.fetch_add(1, std::memory_order_relaxed);
    }
  };
  if (threads <= 1) {
    for (uint64_t c = 0; c < chunks; ++c) {
      partials[c] = measure_chunk(ref, target, c * kChunk, std::min(n, (c + 1) * kChunk), scale);
      if (opts.on_progress && c % 64 == 63) opts.on_progress((c + 1) * kChunk);
    }
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
  }
  Partial total;
  for (const Partial& p : partials) total.add(p);
  return total;
}

// Squares of values beyond 2^±400 overflow or underflow a float64 sum (only float64 inputs
// get there): then every value is measured times 2^-e, e the exponent of the largest, so the
// largest is near 1. A power of two keeps the scaled values exact.
double scale_for(double largest) {
  if (largest == 0 || (largest < 0x1p400 && largest > 0x1p-400)) return 1.0;
  return std::ldexp(1.0, -std::max(std::ilogb(largest), -1000));
}

}  // namespace

TensorMetrics compute_metrics(const TensorView& ref, const TensorView& target, const MetricsOptions& opts) {
  if (ref.count != target.count) throw std::invalid_argument("compute_metrics: element counts differ");
  Partial total = measure_all(ref, target, opts, 1.0);
  // Rare (float64 extremes): a second pass, scaled; its progress is not reported again.
  double scale = scale_for(std::max(total.max_r, total.max_t));
  if (scale != 1.0) {
    MetricsOptions quiet = opts;
    quiet.on_progress = nullptr;
    total = measure_all(ref, target, quiet, scale);
  }
  if (opts.on_progress) opts.on_progress(ref.count);
  return finish(total, ref.count, scale);
}

}  // namespace npud
