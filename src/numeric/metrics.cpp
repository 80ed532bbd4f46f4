#include "numeric/metrics.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

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
void convert(const TensorView& v, uint64_t start, size_t m, double* out) {
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
  }
}

void convert_any(const TensorView& v, uint64_t start, size_t m, double* out) {
  if (v.byte_swapped) convert<true>(v, start, m, out);
  else convert<false>(v, start, m, out);
}

// One chunk's (or the whole tensor's) running totals.
struct Partial {
  double rt = 0, rr = 0, tt = 0, dd = 0;
  double max_abs = 0, max_rel = 0;
  uint64_t finite = 0, gt1 = 0, gt5 = 0;
  uint64_t nan_r = 0, nan_t = 0, inf_r = 0, inf_t = 0, ovf = 0, unf = 0;

  void add(const Partial& o) {
    rt += o.rt; rr += o.rr; tt += o.tt; dd += o.dd;
    max_abs = std::max(max_abs, o.max_abs);
    max_rel = std::max(max_rel, o.max_rel);
    finite += o.finite; gt1 += o.gt1; gt5 += o.gt5;
    nan_r += o.nan_r; nan_t += o.nan_t; inf_r += o.inf_r; inf_t += o.inf_t; ovf += o.ovf; unf += o.unf;
  }
};

// Element i of a chunk goes to lane i % 4, whose sums are kept in order: four independent
// accumulators (two SSE2 vectors of two) that are combined in lane order at the end, so the
// result depends on the data alone. Non-finite pairs take part as (0, 0), which adds exact
// zeros, so no branch is needed.
constexpr int kLanes = 4;
using v2d = double __attribute__((vector_size(16)));
using v2i = int64_t __attribute__((vector_size(16)));

struct Lanes2 {
  v2d rt{}, rr{}, tt{}, dd{}, max_abs{}, max_rel{};
  v2i finite{}, gt1{}, gt5{}, nan_r{}, nan_t{}, inf_r{}, inf_t{}, ovf{}, unf{};
};

[[gnu::always_inline]] inline v2d vabs(v2d x) {
  const v2i mask = {INT64_MAX, INT64_MAX};
  return (v2d)((v2i)x & mask);
}

// Adds two elements (one per lane); comparisons give -1 where true, so counts subtract.
[[gnu::always_inline]] inline void measure2(Lanes2& L, v2d r, v2d t) {
  const v2d inf = {INFINITY, INFINITY};
  const v2d zero{};
  const v2d fp16_max = {kFp16Max, kFp16Max};
  const v2d floor = {kRelFloor, kRelFloor};
  const v2d e3 = {1e-3, 1e-3}, e53 = {5e-3, 5e-3};
  v2d ar = vabs(r), at = vabs(t);
  v2i fr = ar < inf, ft = at < inf;  // false for NaN too
  L.nan_r -= r != r;
  L.nan_t -= t != t;
  L.inf_r -= ar == inf;
  L.inf_t -= at == inf;
  L.ovf -= fr & (at > fp16_max);     // |t| > 65504 includes +-Inf, excludes NaN
  L.unf -= (r != zero) & (t == zero);
  v2i both = fr & ft;
  v2d r0 = (v2d)((v2i)r & both), t0 = (v2d)((v2i)t & both);
  v2d d = t0 - r0;
  v2d ad = vabs(d);
  v2d ar0 = vabs(r0);
  v2d rel = ad / (ar0 > floor ? ar0 : floor);
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

// lo holds lanes 0 and 1, hi lanes 2 and 3.
void measure_block(const double* r, const double* t, size_t m, Lanes2& lo, Lanes2& hi) {
  size_t full = m / kLanes * kLanes;
  for (size_t i = 0; i < full; i += kLanes) {
    v2d r0, r1, t0, t1;
    std::memcpy(&r0, r + i, sizeof r0);
    std::memcpy(&r1, r + i + 2, sizeof r1);
    std::memcpy(&t0, t + i, sizeof t0);
    std::memcpy(&t1, t + i + 2, sizeof t1);
    measure2(lo, r0, t0);
    measure2(hi, r1, t1);
  }
  // Ragged end of the tensor: each remaining element goes to its own lane, the others stay.
  for (size_t k = 0; full + k < m; ++k) {
    Lanes2& L = k < 2 ? lo : hi;
    Lanes2 before = L;
    v2d rv{}, tv{};
    rv[k % 2] = r[full + k];
    tv[k % 2] = t[full + k];
    measure2(L, rv, tv);
    size_t other = 1 - k % 2;
    L.rt[other] = before.rt[other]; L.rr[other] = before.rr[other]; L.tt[other] = before.tt[other];
    L.dd[other] = before.dd[other]; L.max_abs[other] = before.max_abs[other];
    L.max_rel[other] = before.max_rel[other]; L.finite[other] = before.finite[other];
    L.gt1[other] = before.gt1[other]; L.gt5[other] = before.gt5[other]; L.nan_r[other] = before.nan_r[other];
    L.nan_t[other] = before.nan_t[other]; L.inf_r[other] = before.inf_r[other];
    L.inf_t[other] = before.inf_t[other]; L.ovf[other] = before.ovf[other]; L.unf[other] = before.unf[other];
  }
}

Partial measure_chunk(const TensorView& ref, const TensorView& target, uint64_t begin, uint64_t end) {
  Lanes2 lanes[2];
  alignas(32) double rbuf[kBlock], tbuf[kBlock];
  for (uint64_t at = begin; at < end; at += kBlock) {
    size_t m = size_t(std::min<uint64_t>(kBlock, end - at));
    convert_any(ref, at, m, rbuf);
    convert_any(target, at, m, tbuf);
    measure_block(rbuf, tbuf, m, lanes[0], lanes[1]);  // kBlock is a multiple of 4: lane = index in chunk % 4
  }
  Partial out;
  for (int lane = 0; lane < kLanes; ++lane) {
    const Lanes2& l = lanes[lane / 2];
    int k = lane % 2;
    Partial p;
    p.rt = l.rt[k]; p.rr = l.rr[k]; p.tt = l.tt[k]; p.dd = l.dd[k];
    p.max_abs = l.max_abs[k]; p.max_rel = l.max_rel[k];
    p.finite = uint64_t(l.finite[k]); p.gt1 = uint64_t(l.gt1[k]); p.gt5 = uint64_t(l.gt5[k]);
    p.nan_r = uint64_t(l.nan_r[k]); p.nan_t = uint64_t(l.nan_t[k]);
    p.inf_r = uint64_t(l.inf_r[k]); p.inf_t = uint64_t(l.inf_t[k]);
    p.ovf = uint64_t(l.ovf[k]); p.unf = uint64_t(l.unf[k]);
    if (lane == 0) out = p;
    else out.add(p);
  }
  return out;
}

TensorMetrics finish(const Partial& p, uint64_t n) {
  TensorMetrics m;
  m.n = n;
  m.finite = p.finite;
  m.nan_ref = p.nan_r;
  m.nan = p.nan_t;
  m.inf_ref = p.inf_r;
  m.inf = p.inf_t;
  m.overflow = p.ovf;
  m.underflow = p.unf;
  if (n == 0) {
    m.cos = 1.0;
    return m;
  }
  if (p.finite == 0) return m;  // cos stays null, errors 0
  double nr = std::sqrt(p.rr), nt = std::sqrt(p.tt);
  if (nr == 0 && nt == 0) m.cos = 1.0;
  else if (nr == 0 || nt == 0) m.cos = 0.0;
  else m.cos = p.rt / (nr * nt);
  m.max_abs = p.max_abs;
  m.max_rel = p.max_rel;
  m.rmse = std::sqrt(p.dd / double(p.finite));
  m.gt_1e3 = double(p.gt1) / double(p.finite);
  m.gt_5e3 = double(p.gt5) / double(p.finite);
  return m;
}

}  // namespace

TensorMetrics compute_metrics(const TensorView& ref, const TensorView& target, const MetricsOptions& opts) {
  if (ref.count != target.count) throw std::invalid_argument("compute_metrics: element counts differ");
  const uint64_t n = ref.count;
  const uint64_t chunks = (n + kChunk - 1) / kChunk;
  unsigned threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = unsigned(std::min<uint64_t>(threads, chunks));
  std::vector<Partial> partials(chunks);
  std::atomic<uint64_t> next{0}, done{0};
  auto work = [&] {
    for (uint64_t c; (c = next.fetch_add(1)) < chunks;) {
      partials[c] = measure_chunk(ref, target, c * kChunk, std::min(n, (c + 1) * kChunk));
      done.fetch_add(1, std::memory_order_relaxed);
    }
  };
  if (threads <= 1) {
    for (uint64_t c = 0; c < chunks; ++c) {
      partials[c] = measure_chunk(ref, target, c * kChunk, std::min(n, (c + 1) * kChunk));
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
  if (opts.on_progress) opts.on_progress(n);
  return finish(total, n);
}

}  // namespace npud
