// The amp-check sections of the text and JSON reports: where drift starts, the worst ops
// and modules, the ops to keep in fp32 and the loss-scale advice (docs/amp-check.md).
#include <cmath>

#include <fmt/format.h>

#include "util/escape.hpp"
#include "util/json_writer.hpp"
#include "report/text_style.hpp"
#include "report/render.hpp"

namespace npud {
namespace {

std::string cos_cell(double c) { return c == c ? fmt::format("{:.4f}", c) : "null"; }
std::string pct(double share) { return fmt::format("{:.2f}%", 100 * share); }

std::string metrics_line(const TensorMetrics& m) {
  return fmt::format("cos {}  >5e-3 {}  max_rel {:.3g}  overflow {}  underflow {}  NaN/Inf {}/{} (fp32: {}/{})",
                     cos_cell(m.cos), pct(m.gt_5e3), m.max_rel, m.overflow, m.underflow, m.nan, m.inf, m.nan_ref,
                     m.inf_ref);
}

void table(std::ostream& os, std::string_view title, const std::vector<DriftRow>& rows, std::string_view what) {
  if (rows.empty()) return;
  os << fmt::format("  {}\n", title);
  // local: the op's own error; drift: the error accumulated up to its output (docs/amp-check.md).
  os << fmt::format("    {:>6} {:>6} {:>5} {:>10} {:>8} {:>10} {:>8} {:>8} {:>9}  {}\n", "calls", "lowp", "bad",
                    "local cos", ">5e-3", "drift cos", ">5e-3", "overflow", "underflow", what);
  for (const DriftRow& r : rows)
    os << fmt::format("    {:>6} {:>6} {:>5} {:>10} {:>8} {:>10} {:>8} {:>8} {:>9}  {}\n", r.calls, r.lowp, r.bad_local,
                      cos_cell(r.worst_local_cos), pct(r.local_gt_5e3), cos_cell(r.worst_drift_cos),
                      pct(r.drift_gt_5e3), r.overflow, r.underflow, terminal_safe(r.name));
}

}  // namespace

void render_amp_text(std::ostream& os, const AmpSummary& a, bool color) {
  auto bold = [style = TextStyle{color}](std::string_view t) { return style.bold(t); };
  const AmpHeader& h = a.header;
  std::string how = h.emulated == 1 ? "emulated on CPU" : h.emulated == 0 ? "autocast on the device" : "";
  // First what the check did to the program's own numbers, then what was measured.
  os << bold("AMP check") << ": " << terminal_safe(program_numerics(h, a.lowp, a.measured)) << '\n';
  os << fmt::format("  {}{}{}; {} ops measured, {} in low precision\n",
                    terminal_safe(short_dtype(h.dtype.empty() ? "?" : h.dtype)),
                    h.level.empty() ? "" : " " + terminal_safe(h.level), how.empty() ? "" : ", " + how, a.measured,
                    a.lowp);
  if (a.measured > 0) {
    if (a.start.op == kNone) {
      os << "  no drift: every op stays within cos >= 0.999 and gains no NaN/Inf\n";
    } else {
      const AmpPlace& p = a.start_place;
      std::string where = p.file.empty() ? "" : fmt::format("{}:{}", p.file, p.line);
      os << fmt::format("  drift {} at {}{}{}\n", a.start.gradual ? "builds up gradually, first crossing" : "starts",
                        bold(terminal_safe(p.op)), where.empty() ? "" : "  " + terminal_safe(where),
                        p.module.empty() ? "" : "  module " + terminal_safe(p.module));
      os << "      local: " << metrics_line(a.start_numeric.local) << '\n';
      os << "      drift: " << metrics_line(a.start_numeric.drift) << '\n';
      os << fmt::format("      {} ops diverge on their own, {} drift from the fp32 shadow\n", a.start.diverging_local,
                        a.start.diverging_drift);
    }
    table(os, "drift by op (worst first)", a.by_op, "op");
    table(os, "drift by module (worst first)", a.by_module, "module");
  }
  if (!a.keep_fp32.empty()) {
    os << "  keep in fp32:\n";
    for (const KeepFp32& k : a.keep_fp32)
      os << fmt::format("    {:<28} {} in {}/{} calls; NPU autocast: {}\n", terminal_safe(k.op), k.reason,
                        k.bad_calls, k.calls,
                        k.policy.empty() ? "not listed" : k.policy.starts_with("fp32") ? "fp32 already (" + k.policy + ")"
                                                                                        : k.policy);
  }
  const GradAdvice& g = a.grads;
  if (g.histograms > 0 && h.bf16()) {
    os << fmt::format("  loss scale: not needed for bf16 ({} optimizer steps recorded)\n", g.histograms);
  } else if (g.histograms > 0 && g.nonzero > 0) {
    os << fmt::format("  loss scale: {} of nonzero gradient elements fall below 2^-24 {}, {} exceed 65504",
                      pct(g.underflow_share_used), g.scaled ? fmt::format("at scale {}", g.loss_scale) : "unscaled",
                      g.overflow);
    if (g.have_hist)
      os << fmt::format("; largest ~2^{}: initial scale 2^{} = {} ({} below 2^-24 then)", g.max_log2,
                        g.suggested_log2, std::ldexp(1.0, g.suggested_log2), pct(g.underflow_share_suggested));
    os << '\n';
  }
  const ScalerUse& s = a.scaler;
  if (s.scale + s.unscale + s.step + s.update > 0)
    os << fmt::format("  GradScaler calls: scale {}, unscale_ {}, step {}, update {}\n", s.scale, s.unscale, s.step,
                      s.update);
  else if (g.histograms > 0)
    os << "  GradScaler: not used\n";
  os << '\n';
}

void write_metrics_json(JsonWriter& w, const TensorMetrics& m, bool compare_fields) {
  w.begin_object();
  w.field("n", m.n);
  w.field("finite", m.finite);
  w.field("cos", m.cos);
  w.field("max_abs", m.max_abs);
  w.field("max_rel", m.max_rel);
  w.field("rmse", m.rmse);
  w.field("gt_1e3", m.gt_1e3);
  w.field("gt_5e3", m.gt_5e3);
  w.field("nan_ref", m.nan_ref);
  w.field("nan", m.nan);
  w.field("inf_ref", m.inf_ref);
  w.field("inf", m.inf);
  w.field("overflow", m.overflow);
  w.field("underflow", m.underflow);
  if (compare_fields) {
    w.field("norm_ratio", m.norm_ratio);
    w.field("nonfinite_mismatch", m.nonfinite_mismatch);
  }
  w.end_object();
}

namespace {

void rows_json(JsonWriter& w, std::string_view key, const std::vector<DriftRow>& rows) {
  w.key(key).begin_array();
  for (const DriftRow& r : rows) {
    w.begin_object();
    w.field("name", r.name);
    w.field("calls", uint64_t(r.calls));
    w.field("lowp", uint64_t(r.lowp));
    w.field("bad_local", uint64_t(r.bad_local));
    w.field("bad_drift", uint64_t(r.bad_drift));
    w.field("worst_local_cos", r.worst_local_cos);
    w.field("worst_drift_cos", r.worst_drift_cos);
    w.field("local_gt_5e3", r.local_gt_5e3);
    w.field("drift_gt_5e3", r.drift_gt_5e3);
    w.field("local_max_rel", r.local_max_rel);
    w.field("overflow", r.overflow);
    w.field("underflow", r.underflow);
    w.end_object();
  }
  w.end_array();
}


}  // namespace

void write_amp_json(JsonWriter& w, const AmpSummary& a) {
  const AmpHeader& h = a.header;
  w.begin_object();
  string_or_null(w, "dtype", h.dtype);
  string_or_null(w, "level", h.level);
  w.key("emulated");
  if (h.emulated < 0) w.null();
  else w.value(h.emulated == 1);
  string_or_null(w, "metric_dtype", h.metric_dtype);
  w.field("program_numerics", program_numerics(h, a.lowp, a.measured));
  w.field("measured_ops", uint64_t(a.measured));
  w.field("lowp_ops", uint64_t(a.lowp));
  w.field("diverging_ops", uint64_t(a.start.diverging_local));
  w.field("drifting_ops", uint64_t(a.start.diverging_drift));
  w.key("drift_start");
  if (a.start.op == kNone) {
    w.null();
  } else {
    const AmpPlace& p = a.start_place;
    w.begin_object();
    w.field("op", p.op);
    string_or_null(w, "module", p.module);
    string_or_null(w, "file", p.file);
    w.key("line");
    if (p.line > 0) w.value(p.line);
    else w.null();
    w.field("gradual", a.start.gradual);
    w.key("local");
    write_metrics_json(w, a.start_numeric.local);
    w.key("drift");
    write_metrics_json(w, a.start_numeric.drift);
    w.end_object();
  }
  rows_json(w, "by_op", a.by_op);
  rows_json(w, "by_module", a.by_module);
  w.key("keep_fp32").begin_array();
  for (const KeepFp32& k : a.keep_fp32) {
    w.begin_object();
    w.field("op", k.op);
    w.field("reason", k.reason);
    w.field("calls", uint64_t(k.calls));
    w.field("bad_calls", uint64_t(k.bad_calls));
    w.field("overflow", k.overflow);
    w.field("underflow", k.underflow);
    w.field("worst_cos", k.worst_cos);
    string_or_null(w, "npu_autocast_policy", k.policy);
    w.end_object();
  }
  w.end_array();
  const GradAdvice& g = a.grads;
  w.key("grads");
  if (g.histograms == 0) {
    w.null();
  } else {
    w.begin_object();
    w.field("steps", uint64_t(g.histograms));
    w.field("elements", g.elements);
    w.field("nonzero", g.nonzero);
    w.field("underflow_fp16", g.underflow);
    w.field("overflow_fp16", g.overflow);
    w.field("underflow_share", g.underflow_share);
    w.field("overflow_share", g.overflow_share);
    w.field("scaled", g.scaled);
    w.key("loss_scale");
    if (g.scaled) w.value(g.loss_scale);
    else w.null();
    w.field("underflow_share_in_use", g.underflow_share_used);
    w.key("max_log2");
    if (g.have_hist) w.value(g.max_log2);
    else w.null();
    w.key("suggested_scale");
    if (g.have_hist && !h.bf16()) w.value(std::ldexp(1.0, g.suggested_log2));
    else w.null();
    w.field("underflow_share_at_suggested", g.underflow_share_suggested);
    w.end_object();
  }
  w.key("grad_scaler").begin_object();
  w.field("scale", uint64_t(a.scaler.scale));
  w.field("unscale", uint64_t(a.scaler.unscale));
  w.field("step", uint64_t(a.scaler.step));
  w.field("update", uint64_t(a.scaler.update));
  w.field("autocast", uint64_t(a.scaler.autocast));
  w.end_object();
  w.end_object();
}

}  // namespace npud
