// What an amp-check capture measured (docs/formats/amp.md), condensed once for the AMP
// rules (src/rules/amp00*.cpp) and the reports (drift tables, keep-in-fp32 list, loss-scale
// advice). The metrics themselves come from the shim (docs/metrics.md); nothing here
// computes tensor metrics, it only ranks and aggregates them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/dtype.hpp"
#include "model/trace.hpp"

namespace npud {

struct KnowledgeVersion;

// Thresholds the AMP rules document (docs/amp-check.md, docs/rules/AMP00*.md).
inline constexpr double kUnderflowShareBad = 0.01;      // an op flushing >= 1% of its nonzero values to 0
inline constexpr double kGradUnderflowShareBad = 0.01;  // >= 1% of gradient elements lost to fp16 underflow
inline constexpr double kFp16Max = 65504.0;
inline constexpr int kFp16MinSubnormalLog2 = -24;
// An error whose largest element is below fp16's smallest subnormal (2^-24) is numerically
// zero in a low-precision run: a near-zero tensor (x - x.mean() of equal values) can show cos
// 0.02 from 1e-11 of noise, which changes nothing downstream. Such a tensor does not diverge.
inline constexpr double kNegligibleAbsError = 5.9604644775390625e-08;  // 2^-24

// docs/metrics.md's divergence (cos < 0.999 or new NaN/Inf), for amp-check: new NaN/Inf, or
// cos below the threshold with an error above kNegligibleAbsError.
bool amp_diverges(const TensorMetrics& m);

// The ops amp-check measured, in program order: the forward pass only. Backward ops take
// their precision from the forward op that made them (autocast decides forward ops), and
// gradient range is what loss scaling handles (AMP003/AMP004): "keep this gradient op in
// fp32" is never the fix.
// Views, copies that keep the dtype, ops with undefined output memory and fused attention
// kernels measured against themselves are left out: they have no numerics of their own.
std::vector<uint32_t> measured_ops(const Trace& t);
bool own_numerics(const Trace& t, const Op& op, const OpNumeric& n);
// Run by autograd's backward pass: the op or an op around it (the mul.Tensor inside a backward
// node's mul.Scalar carries no `bwd` of its own). Backward ops follow the forward ops that made
// them: they neither start a drift nor are kept in fp32 themselves.
bool in_backward(const Trace& t, uint32_t op);

// The header's "amp" object (Trace::env).
struct AmpHeader {
  std::string dtype;          // "float16", "bfloat16" ("" = not an amp-check capture)
  DType type = DType::Unknown;  // dtype, parsed once
  std::string level;          // "O1", "O2"
  int emulated = -1;          // 1 CPU emulation, 0 real autocast on the device, -1 unknown
  std::string metric_dtype;
  std::string lists;
  bool fp16() const { return type == DType::F16; }
  bool bf16() const { return type == DType::BF16; }
};
AmpHeader amp_header(const Trace& t);
// How many ops an amp-check capture measured, and how many of them ran in low precision.
struct AmpCounts {
  size_t measured = 0, lowp = 0;
};
AmpCounts amp_counts(const Trace& t);
// What the check did to the program's own numbers, said first in every amp report: the
// program ran in low precision (emulated or real autocast) from the first recorded step on, so
// its losses and outputs differ from an fp32 run; fp32 was only the shadow's. With `lowp` of
// `measured` ops in low precision: none of them means the check compared fp32 with fp32 (a
// program whose steps the shim did not reach), said so instead (issue 41).
std::string program_numerics(const AmpHeader& h, size_t lowp, size_t measured);

// Where an op is: its module (or the nearest enclosing op's) and its user frame.
struct AmpPlace {
  std::string op, module, file;
  int line = 0;
};
AmpPlace amp_place(const Trace& t, uint32_t op);

// The op where drift starts: the first op (program order) whose own (local) error crosses
// the docs/metrics.md thresholds; when no op does but drift still crosses them (many small
// errors adding up), the first op whose accumulated drift does, with `gradual` set.
struct DriftStart {
  uint32_t op = kNone;
  bool gradual = false;
  size_t diverging_local = 0;   // ops whose local error diverges
  size_t diverging_drift = 0;   // ops whose drift diverges
};
// Per step index (the last entry: ops outside any step): the start of the first fused attention
// kernel an older shim measured against itself. The fp32 shadow of everything after it in that
// step is that garbage, so drift (not local error) is not judged there.
std::vector<int64_t> shadow_lost_at(const Trace& t);
DriftStart find_drift_start(const Trace& t);

// Why an op's low-precision run is bad on its own (local metrics), or "" when it is fine.
std::string_view local_problem(const OpNumeric& n);

struct DriftRow {
  std::string name;             // op name or module path
  size_t calls = 0, lowp = 0, bad_local = 0, bad_drift = 0;
  double worst_local_cos = 1, worst_drift_cos = 1;   // lowest seen (1 when none measured, 0 for a null cos)
  double local_gt_5e3 = 0, drift_gt_5e3 = 0;         // highest seen
  double local_max_rel = 0;
  int64_t overflow = 0, underflow = 0;               // local counts, summed
  uint32_t first_op = kNone;
  double score() const;         // what rows are ranked by (worst first)
};
// One row per op name (by_module = false) or per module path; worst first, at most top_n.
std::vector<DriftRow> drift_table(const Trace& t, bool by_module, size_t top_n);

// Ops to keep in fp32: low-precision calls that overflow, underflow or lose accuracy on
// their own, grouped by op name, with the NPU autocast policy of the chosen torch_npu.
struct KeepFp32 {
  std::string op;
  size_t calls = 0, bad_calls = 0;
  int64_t overflow = 0, underflow = 0, elements = 0;
  double worst_cos = 1, worst_gt_5e3 = 0;
  std::string reason;           // "overflow", "underflow", "precision loss"
  std::string policy;           // autocast policy ("fp32", "lower_precision_fp", "" none)
  uint32_t first_op = kNone;    // first bad call
};
std::vector<KeepFp32> keep_in_fp32(const Trace& t, const KnowledgeVersion& npu);

// Loss-scale advice from the gradient histograms (fp16 range: 2^-24 .. 65504).
struct GradAdvice {
  size_t histograms = 0;
  int64_t elements = 0, nonzero = 0, underflow = 0, overflow = 0, nonfinite = 0;
  double underflow_share = 0;   // nonzero gradient elements below 2^-24 (lost in fp16, unscaled)
  double overflow_share = 0;
  bool scaled = false;          // a GradScaler scaled the loss
  double loss_scale = 0;        // the last scale seen (when scaled)
  double underflow_share_used = 0;  // below 2^-24 after the scale in use (= underflow_share unscaled)
  int max_log2 = 0;             // floor(log2) of the largest gradient magnitude bucket
  bool have_hist = false;
  int suggested_log2 = 16;      // initial scale 2^suggested_log2
  double underflow_share_suggested = 0;
  // GradScaler's default initial scale (2^16), what a program's scaler starts at on the NPU
  // when it was disabled here (torch.cuda.amp.GradScaler without CUDA).
  double underflow_share_default_scale = 0;
};
GradAdvice grad_advice(const Trace& t);

struct ScalerUse {
  size_t scale = 0, unscale = 0, step = 0, update = 0, autocast = 0;
};
ScalerUse scaler_use(const Trace& t);

// Everything the reports show about an amp-check capture.
struct AmpSummary {
  AmpHeader header;
  size_t measured = 0, lowp = 0;
  DriftStart start;
  AmpPlace start_place;
  OpNumeric start_numeric;
  std::vector<DriftRow> by_op, by_module;
  std::vector<KeepFp32> keep_fp32;
  GradAdvice grads;
  ScalerUse scaler;
};
AmpSummary summarize_amp(const Trace& t, const KnowledgeVersion& npu, size_t top_n = 10);

}  // namespace npud
