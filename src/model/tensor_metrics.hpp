// The comparison metrics of docs/metrics.md for one pair of tensors (reference = fp32 or the
// trusted run, target = low precision or the run under test), and when a pair diverges.
// One struct for both producers: `compare` computes it in C++ (src/numeric), amp-check's
// shim computes it with torch ops and the capture reader stores it on the op.
#pragma once

#include <cstdint>
#include <limits>

namespace npud {

struct TensorMetrics {
  int64_t n = 0, finite = 0;
  double cos = std::numeric_limits<double>::quiet_NaN();   // NaN = null: no finite pair
  double max_abs = 0, max_rel = 0, rmse = 0, gt_1e3 = 0, gt_5e3 = 0;
  int64_t nan_ref = 0, nan = 0, inf_ref = 0, inf = 0, overflow = 0, underflow = 0;
  // `compare` only (amp-check's shim leaves them null/0): ||target|| / ||reference|| over the
  // finite pairs (cos is blind to a uniform rescaling), and the positions where the two sides
  // are not the same kind of value among NaN, +Inf, -Inf (finite counts as one kind).
  double norm_ratio = std::numeric_limits<double>::quiet_NaN();  // NaN = null
  int64_t nonfinite_mismatch = 0;

  bool has_cos() const { return cos == cos; }
  bool has_norm_ratio() const { return norm_ratio == norm_ratio; }
  bool gained_nonfinite() const { return nan + inf > nan_ref + inf_ref; }
};

// docs/metrics.md "Thresholds": adjustable on the CLI (`compare --min-cos`).
struct Thresholds {
  // Cosine similarity catches errors spread over a tensor; fp16 (bf16) rounding alone keeps
  // cos above 1 - 1e-6 (1e-5), so 0.999 leaves room for ordinary low-precision noise.
  double min_cos = 0.999;
  // |norm_ratio - 1| above this diverges: msprobe's five-thousandths bound, applied to the
  // whole tensor's magnitude. fp16 (bf16) rounding moves a norm by < 5e-4 (< 4e-3).
  double max_norm_ratio_err = 0.005;
  // Statistics-only dumps (msprobe task "statistics"): relative difference of Max/Min/Norm.
  double max_stat_rel = 0.01;
};

// A pair diverges when cos < min_cos, the target gained NaN/Inf, a NaN/+Inf/-Inf differs at
// some position, or the norms differ by more than max_norm_ratio_err. The share of elements
// beyond 5e-3 relative error and the max relative error are reported but do not decide:
// near-zero outputs (any zero-mean activation) have large relative errors from rounding alone.
inline bool diverges(const TensorMetrics& m, const Thresholds& t = {}) {
  bool magnitude = m.has_norm_ratio() && !(m.norm_ratio >= 1 - t.max_norm_ratio_err && m.norm_ratio <= 1 + t.max_norm_ratio_err);
  return (m.has_cos() && m.cos < t.min_cos) || m.gained_nonfinite() || m.nonfinite_mismatch > 0 || magnitude;
}

}  // namespace npud
