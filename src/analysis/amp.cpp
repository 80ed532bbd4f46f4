#include "analysis/amp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "knowledge/knowledge.hpp"
#include "knowledge/op_families.hpp"
#include "util/saturate.hpp"

namespace npud {

std::string program_numerics(const AmpHeader& h, size_t lowp, size_t measured) {
  std::string_view d = h.fp16() ? "fp16" : h.bf16() ? "bf16" : "low precision";
  if (measured > 0 && lowp == 0)
    return fmt::format("no op of the program ran in {}: none of the {} ops measured, so the drift below compares fp32 "
                       "with fp32 and says nothing about {}",
                       d, measured, d);
  std::string how = h.emulated == 1   ? fmt::format(" (emulated: each op's inputs and outputs rounded to {})", d)
                    : h.emulated == 0 ? std::string(" (autocast on the device)")
                                      : std::string();
  return fmt::format("the program itself ran in {}{} from the first recorded step on ({} of the {} ops measured): "
                     "its losses and outputs differ from an fp32 run; the fp32 numbers are the shadow's",
                     d, how, lowp, measured);
}

AmpCounts amp_counts(const Trace& t) {
  AmpCounts c;
  c.measured = t.numerics.size();
  for (const OpNumeric& n : t.numerics) c.lowp += n.lowp ? 1 : 0;
  return c;
}

AmpHeader amp_header(const Trace& t) {
  AmpHeader h;
  h.dtype = std::string(t.env_value("amp_dtype"));
  h.level = std::string(t.env_value("amp_level"));
  std::string_view e = t.env_value("amp_emulated");
  h.emulated = e == "true" ? 1 : e == "false" ? 0 : -1;
  h.metric_dtype = std::string(t.env_value("amp_metric_dtype"));
  h.lists = std::string(t.env_value("amp_lists"));
  if (h.dtype.empty()) {
    // No header (an older or hand-made capture): the dtype the low-precision ops ran in.
    for (const OpNumeric& n : t.numerics)
      if (n.lowp && n.dtype) {
        h.dtype = std::string(t.str(n.dtype));
        break;
      }
  }
  h.type = parse_dtype(h.dtype);
  return h;
}

AmpPlace amp_place(const Trace& t, uint32_t op) {
  AmpPlace p;
  if (op >= t.ops.size()) return p;
  p.op = std::string(t.str(t.ops[op].name));
  for (uint32_t i = op; i != kNone; i = t.ops[i].parent) {
    if (p.module.empty() && t.ops[i].module) p.module = std::string(t.str(t.ops[i].module));
    if (p.file.empty())
      if (const Frame* f = t.user_frame(t.ops[i])) {
        p.file = std::string(t.str(f->file));
        p.line = f->line;
      }
    if (!p.module.empty() && !p.file.empty()) break;
  }
  return p;
}

namespace {

// A fused attention kernel of a device (CUDA's SDPA kernels, torch_npu's npu_fusion_attention):
// its fp32 reference is only right when the shim computed it ("ref":"math"); older shims ran
// the same kernel on fp32 inputs, which on a device returns other values (cos 0.0009 on an H200).
bool fused_attention_kernel(std::string_view base) {
  for (std::string_view k : {"_scaled_dot_product_cudnn_attention", "_scaled_dot_product_efficient_attention",
                             "_scaled_dot_product_flash_attention", "_scaled_dot_product_fused_attention_overrideable",
                             "_flash_attention_forward", "_efficient_attention_forward", "npu_fusion_attention"})
    if (base == k) return true;
  return false;
}

// Inside a torch API torch_npu implements its own way (F.scaled_dot_product_attention: one fused
// kernel on the NPU, with its own fp32 softmax): the CPU's decomposition of it (the math path's
// softmax and dropout multiply) is not what the NPU computes.
bool inside_api(const Trace& t, const Op& op) {
  for (uint32_t p = op.parent; p != kNone; p = t.ops[p].parent)
    if (t.ops[p].kind == OpKind::Api) return true;
  return false;
}

}  // namespace

bool in_backward(const Trace& t, uint32_t op) {
  for (uint32_t p = op; p != kNone; p = t.ops[p].parent)
    if (t.ops[p].backward) return true;
  return false;
}

bool own_numerics(const Trace& t, const Op& op, const OpNumeric& n) {
  std::string_view base = aten_base(t.str(op.name));
  if (in_op_family(OpFamily::UndefinedOutput, base)) return false;   // nothing to measure
  if (fused_attention_kernel(base)) return t.str(n.reference) == "math";
  if (inside_api(t, op)) return false;
  auto in = t.inputs(op), out = t.outputs(op);
  // A view: an output on an input's storage that is not the input itself (in-place ops return it).
  for (uint32_t o : out) {
    const TensorMeta& m = t.tensors[o];
    if (m.storage == kUnset) continue;
    bool same_tensor = false, same_storage = false;
    for (uint32_t i : in) {
      same_tensor = same_tensor || (m.id != kUnset && t.tensors[i].id == m.id);
      same_storage = same_storage || t.tensors[i].storage == m.storage;
    }
    if (same_storage && !same_tensor) return false;
  }
  // A copy that keeps the dtype carries its input's error, none of its own.
  if (in_op_family(OpFamily::ValueCopy, base) && !in.empty() && !out.empty() &&
      t.tensors[in[0]].dtype == t.tensors[out[0]].dtype)
    return false;
  return true;
}

std::vector<uint32_t> measured_ops(const Trace& t) {
  std::vector<uint32_t> out;
  out.reserve(t.numerics.size());
  for (const OpNumeric& n : t.numerics)
    if (n.op < t.ops.size() && !in_backward(t, n.op) && own_numerics(t, t.ops[n.op], n)) out.push_back(n.op);
  std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    const Op &x = t.ops[a], &y = t.ops[b];
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.sequence != y.sequence) return x.sequence < y.sequence;
    return a < b;
  });
  return out;
}

bool amp_diverges(const TensorMetrics& m) {
  return m.gained_nonfinite() || (diverges(m) && m.max_abs >= kNegligibleAbsError);
}

std::string_view local_problem(const OpNumeric& n) {
  if (!n.has_local) return {};
  const TensorMetrics& m = n.local;
  if (m.overflow > 0 || m.gained_nonfinite()) return "overflow";
  int64_t base = m.finite > 0 ? m.finite : m.n;
  if (m.underflow > 0 && base > 0 && double(m.underflow) / double(base) >= kUnderflowShareBad) return "underflow";
  if (amp_diverges(m)) return "precision loss";
  return {};
}

std::vector<int64_t> shadow_lost_at(const Trace& t) {
  std::vector<int64_t> lost(t.steps.size() + 1, std::numeric_limits<int64_t>::max());
  for (const OpNumeric& n : t.numerics) {
    if (n.op >= t.ops.size()) continue;
    const Op& op = t.ops[n.op];
    if (!fused_attention_kernel(aten_base(t.str(op.name))) || t.str(n.reference) == "math") continue;
    int64_t& at = lost[op.step_index >= 0 && size_t(op.step_index) < t.steps.size() ? size_t(op.step_index) : t.steps.size()];
    at = std::min(at, op.start_ns);
  }
  return lost;
}

DriftStart find_drift_start(const Trace& t) {
  DriftStart s;
  uint32_t first_drift = kNone;
  const std::vector<int64_t> lost = shadow_lost_at(t);
  for (uint32_t op : measured_ops(t)) {
    const OpNumeric& n = t.numerics[t.ops[op].numeric];
    const Op& o = t.ops[op];
    bool trusted = o.start_ns < lost[o.step_index >= 0 && size_t(o.step_index) < t.steps.size() ? size_t(o.step_index) : t.steps.size()];
    bool local = n.has_local && amp_diverges(n.local);
    bool drift = trusted && n.has_drift && amp_diverges(n.drift);
    // Only an op that ran in low precision can start the drift: one that ran in fp32 (the
    // optimizer's addcdiv_ under autocast, a loss in fp32) carries its inputs' error, and
    // "keep it in fp32" would change nothing (issue 45).
    if (local) {
      ++s.diverging_local;
      if (s.op == kNone && n.lowp) s.op = op;
    }
    if (drift) {
      ++s.diverging_drift;
      if (first_drift == kNone && n.lowp) first_drift = op;
    }
  }
  if (s.op == kNone && first_drift != kNone) {
    s.op = first_drift;
    s.gradual = true;
  }
  return s;
}

double DriftRow::score() const {
  // Bad calls first, then how far the worst call is from exact.
  double err = std::max({1.0 - worst_local_cos, local_gt_5e3, 1.0 - worst_drift_cos, drift_gt_5e3});
  return double(bad_local) * 10.0 + (overflow > 0 ? 5.0 : 0.0) + double(bad_drift) + err;
}

namespace {

// cos is null when no element pair is finite. When the low-precision side made them so
// (overflow), that is as far from exact as it gets; when fp32 is as non-finite, nothing drifted.
double cos_or_zero(const TensorMetrics& m) { return m.cos == m.cos ? m.cos : m.gained_nonfinite() ? 0.0 : 1.0; }

}  // namespace

std::vector<DriftRow> drift_table(const Trace& t, bool by_module, size_t top_n) {
  std::vector<DriftRow> rows;
  std::unordered_map<std::string, size_t> index;
  for (uint32_t op : measured_ops(t)) {
    const OpNumeric& n = t.numerics[t.ops[op].numeric];
    std::string key = by_module ? amp_place(t, op).module : std::string(t.str(t.ops[op].name));
    if (by_module && key.empty()) key = "(no module)";
    auto [it, fresh] = index.try_emplace(key, rows.size());
    if (fresh) {
      rows.emplace_back();
      rows.back().name = key;
      rows.back().first_op = op;
    }
    DriftRow& r = rows[it->second];
    r.calls += n.calls;
    if (n.lowp) r.lowp += n.calls;
    if (n.has_local) {
      if (amp_diverges(n.local)) ++r.bad_local;
      r.worst_local_cos = std::min(r.worst_local_cos, cos_or_zero(n.local));
      r.local_gt_5e3 = std::max(r.local_gt_5e3, n.local.gt_5e3);
      r.local_max_rel = std::max(r.local_max_rel, n.local.max_rel);
      // fp32 results above 65504 count as overflow in the metrics (docs/formats/amp.md): only
      // low-precision ops overflow for real
      if (n.lowp) add_saturating(r.overflow, n.local.overflow);
      add_saturating(r.underflow, n.local.underflow);
    }
    if (n.has_drift) {
      if (amp_diverges(n.drift)) ++r.bad_drift;
      r.worst_drift_cos = std::min(r.worst_drift_cos, cos_or_zero(n.drift));
      r.drift_gt_5e3 = std::max(r.drift_gt_5e3, n.drift.gt_5e3);
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const DriftRow& a, const DriftRow& b) { return a.score() > b.score(); });
  if (rows.size() > top_n) rows.resize(top_n);
  return rows;
}

namespace {

std::string policy_for(const KnowledgeVersion& npu, std::string_view op) {
  std::string_view p = npu.autocast_policy(op);
  if (p.empty()) {
    // "aten::softmax.int": the table may list the base name only.
    std::string base = "aten::" + std::string(aten_base(op));
    p = npu.autocast_policy(base);
  }
  return std::string(p);
}

}  // namespace

std::vector<KeepFp32> keep_in_fp32(const Trace& t, const KnowledgeVersion& npu) {
  std::vector<KeepFp32> out;
  std::unordered_map<std::string, size_t> index;
  for (uint32_t op : measured_ops(t)) {
    const OpNumeric& n = t.numerics[t.ops[op].numeric];
    if (!n.lowp) continue;
    std::string name(t.str(t.ops[op].name));
    std::string_view problem = local_problem(n);
    auto it = index.find(name);
    if (it == index.end()) {
      if (problem.empty()) continue;   // only ops with at least one bad call get a row
      it = index.emplace(name, out.size()).first;
      out.emplace_back();
      out.back().op = name;
      out.back().first_op = op;
      out.back().policy = policy_for(npu, name);
    }
    KeepFp32& k = out[it->second];
    k.calls += n.calls;
    if (problem.empty()) continue;
    ++k.bad_calls;
    // overflow counts elements beyond 65504 or Inf; new NaN/Inf overlap them: the larger of the two
    add_saturating(k.overflow, std::max<int64_t>(n.local.overflow, n.local.nan + n.local.inf - n.local.nan_ref - n.local.inf_ref));
    add_saturating(k.underflow, n.local.underflow);
    add_saturating(k.elements, n.local.n);
    if (n.local.cos == n.local.cos) k.worst_cos = std::min(k.worst_cos, n.local.cos);
    k.worst_gt_5e3 = std::max(k.worst_gt_5e3, n.local.gt_5e3);
    // The worst reason seen wins: overflow > underflow > precision loss.
    auto rank = [](std::string_view r) { return r == "overflow" ? 3 : r == "underflow" ? 2 : r.empty() ? 0 : 1; };
    if (rank(problem) > rank(k.reason)) k.reason = std::string(problem);
  }
  // Calls made before the first bad one were not counted: count them now.
  std::unordered_map<StrId, size_t> lowp_calls;
  for (const OpNumeric& n : t.numerics)
    if (n.lowp && n.op < t.ops.size() && !in_backward(t, n.op)) lowp_calls[t.ops[n.op].name] += n.calls;
  for (KeepFp32& k : out) k.calls = lowp_calls[t.ops[k.first_op].name];
  std::stable_sort(out.begin(), out.end(), [](const KeepFp32& a, const KeepFp32& b) {
    auto rank = [](const std::string& r) { return r == "overflow" ? 3 : r == "underflow" ? 2 : 1; };
    if (rank(a.reason) != rank(b.reason)) return rank(a.reason) > rank(b.reason);
    return a.bad_calls > b.bad_calls;
  });
  return out;
}

GradAdvice grad_advice(const Trace& t) {
  GradAdvice g;
  std::map<int, int64_t> by_log2;   // floor(log2|g|) of unscaled gradients -> elements
  for (const GradHistogram& h : t.grad_histograms) {
    ++g.histograms;
    add_saturating(g.elements, h.elements);
    add_saturating(g.nonzero, std::max<int64_t>(0, h.elements - h.zero - h.nonfinite));
    g.underflow += h.underflow_fp16;
    g.overflow += h.overflow_fp16;
    g.nonfinite += h.nonfinite;
    if (h.scaled && h.loss_scale == h.loss_scale) {
      g.scaled = true;
      g.loss_scale = h.loss_scale;
    }
    auto bins = t.bins(h);
    for (size_t k = 0; k < bins.size(); ++k)
      if (bins[k] > 0) by_log2[h.log2_min + int(k)] += bins[k];
  }
  if (g.nonzero > 0) {
    g.underflow_share = double(g.underflow) / double(g.nonzero);
    g.overflow_share = double(g.overflow) / double(g.nonzero);
  }
  g.underflow_share_used = g.underflow_share;
  if (by_log2.empty()) return g;
  g.have_hist = true;
  int64_t total = 0;
  for (auto& [e, c] : by_log2) total += c;
  // |g| * 2^k < 2^-24  <=>  floor(log2|g|) < -24 - k
  auto share_below = [&](int k) {
    int64_t lost = 0;
    for (auto& [e, c] : by_log2)
      if (e < kFp16MinSubnormalLog2 - k) lost += c;
    return total > 0 ? double(lost) / double(total) : 0.0;
  };
  g.max_log2 = by_log2.rbegin()->first;
  // The largest power of two that keeps the largest gradient below 2^15 (< 65504): its bucket
  // [2^e, 2^(e+1)) scaled by 2^k stays at most 2^15, one bit of headroom for growth.
  g.suggested_log2 = std::clamp(14 - g.max_log2, 0, 24);
  g.underflow_share_suggested = share_below(g.suggested_log2);
  g.underflow_share_default_scale = share_below(16);
  if (g.scaled && g.loss_scale > 0) g.underflow_share_used = share_below(int(std::floor(std::log2(g.loss_scale))));
  return g;
}

ScalerUse scaler_use(const Trace& t) {
  ScalerUse s;
  for (const AmpCall& c : t.amp_calls) {
    switch (c.kind) {
      case AmpApi::Scale: ++s.scale; break;
      case AmpApi::Unscale: ++s.unscale; break;
      case AmpApi::Step: ++s.step; break;
      case AmpApi::Update: ++s.update; break;
      case AmpApi::Autocast: ++s.autocast; break;
      case AmpApi::Other: break;
    }
  }
  return s;
}

AmpSummary summarize_amp(const Trace& t, const KnowledgeVersion& npu, size_t top_n) {
  AmpSummary s;
  s.header = amp_header(t);
  AmpCounts c = amp_counts(t);
  s.measured = c.measured;
  s.lowp = c.lowp;
  s.start = find_drift_start(t);
  if (s.start.op != kNone) {
    s.start_place = amp_place(t, s.start.op);
    s.start_numeric = t.numerics[t.ops[s.start.op].numeric];
  }
  s.by_op = drift_table(t, false, top_n);
  s.by_module = drift_table(t, true, top_n);
  s.keep_fp32 = keep_in_fp32(t, npu);
  s.grads = grad_advice(t);
  s.scaler = scaler_use(t);
  return s;
}

}  // namespace npud
