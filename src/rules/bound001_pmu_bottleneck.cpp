// BOUND001 pmu-bottleneck: which unit of the AI Core holds a device op back, from the PMU
// pipeline ratios torch_npu writes to kernel_details.csv (aic_metrics=PipeUtilization).
// Cube ops waiting on data (mte2), ops the scalar unit throttles, and ops no unit keeps busy.
// See docs/rules/BOUND001.md.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

constexpr double kBoundRatio = 0.8;          // the advisor's operator_bound_ratio
constexpr int64_t kMinKernelNs = 20'000;     // the advisor's 20 us: shorter ops are launch-bound anyway
constexpr double kMinDeviceShare = 0.01;     // groups under 1 % of device time are not worth a finding
constexpr double kBoundWarningShare = 0.05;
constexpr double kCubeOp = 0.1;              // an op with aic_mac above this uses the cube

float or0(float v) { return std::isnan(v) ? 0.f : v; }

enum class Bottleneck { None, CubeWaitsOnData, Scalar, NoBound };

struct Units {
  double mac = 0, vec = 0, scalar = 0, mte1 = 0, mte2 = 0, mte3 = 0, fixpipe = 0;
  double max() const { return std::max({mac, vec, scalar, mte1, mte2, mte3, fixpipe}); }
};

Units units_of(const KernelDetail& d) {
  return {or0(d.aic_mac), or0(d.aiv_vec), std::max(or0(d.aic_scalar), or0(d.aiv_scalar)), or0(d.aic_mte1),
          std::max(or0(d.aic_mte2), or0(d.aiv_mte2)), or0(d.aiv_mte3), or0(d.aic_fixpipe)};
}

// Elementwise vector ops are bound by data movement by their nature (one load, one op, one
// store): not reported. Compute-bound ops (mac or vec busy) are where they should be.
// Each ratio is one pipe's busy cycles over the core's total cycles (CANN PipeUtilization); the
// pipes run at once, so the ratios overlap rather than add up. The scalar unit issues every
// pipe's instructions and, in a MIX kernel, the cube/vector sync flags: a cube op whose mte2
// is saturated shows a busy scalar waiting with it (FlashAttentionScore: scalar 96 %, mte2
// 87 %, mac 36 %). The data feed is then the bottleneck, as the advisor's FA rule judges it
// (aic_mte2_ratio >= 0.8), so it is tested before the scalar (docs/advisor-parity.md).
Bottleneck classify_bottleneck(const Units& u) {
  double top = u.max();
  if (top <= 0) return Bottleneck::None;  // counters not collected for this op
  if (u.mac > kCubeOp && u.mac < kBoundRatio && u.mte2 >= kBoundRatio) return Bottleneck::CubeWaitsOnData;
  if (u.scalar >= kBoundRatio && u.scalar >= top) return Bottleneck::Scalar;
  if (top < kBoundRatio) return Bottleneck::NoBound;
  return Bottleneck::None;
}

struct BoundGroup {
  Bottleneck kind = Bottleneck::None;
  size_t count = 0;
  int64_t time_ns = 0;
  Units weighted;  // ratios weighted by duration (sums; divide by time)
  void add(const Units& u, int64_t ns) {
    ++count;
    time_ns += ns;
    double w = double(ns);
    weighted.mac += u.mac * w, weighted.vec += u.vec * w, weighted.scalar += u.scalar * w;
    weighted.mte1 += u.mte1 * w, weighted.mte2 += u.mte2 * w, weighted.mte3 += u.mte3 * w;
    weighted.fixpipe += u.fixpipe * w;
  }
  Units mean() const {
    double t = double(std::max<int64_t>(time_ns, 1));
    return {weighted.mac / t, weighted.vec / t,  weighted.scalar / t, weighted.mte1 / t,
            weighted.mte2 / t, weighted.mte3 / t, weighted.fixpipe / t};
  }
};

std::string ratios_text(const Units& u) {
  return fmt::format("mac {:.0f}%, vec {:.0f}%, scalar {:.0f}%, mte2 {:.0f}%, mte3 {:.0f}%, fixpipe {:.0f}%", 100 * u.mac,
                     100 * u.vec, 100 * u.scalar, 100 * u.mte2, 100 * u.mte3, 100 * u.fixpipe);
}

class PmuBottleneck final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"BOUND001", "pmu-bottleneck",
        "device ops held back by one AI Core unit: cube waiting on data, scalar-bound, no unit busy (NPU PMU ratios)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (t.kernel_details.empty()) return;
    const TraceIndex& index = ctx.index();
    // One group per (op, bottleneck): an op is judged by each of its calls, so one slow shape
    // of an otherwise healthy op still shows.
    std::map<std::pair<std::string, Bottleneck>, BoundGroup> groups;
    for (const Kernel& k : t.kernels) {
      if (k.detail == kNone || k.dur_ns < kMinKernelNs) continue;
      const KernelDetail& d = t.kernel_details[k.detail];
      // Older CANN writes only mac and vec ratios: without the data-movement and scalar units
      // no op can be called bound or unbound.
      if (std::isnan(d.aic_mte2) && std::isnan(d.aiv_mte2)) continue;
      if (std::isnan(d.aic_scalar) && std::isnan(d.aiv_scalar)) continue;
      Units u = units_of(d);
      Bottleneck b = classify_bottleneck(u);
      if (b == Bottleneck::None) continue;
      BoundGroup& g = groups[{normalize_task_name(t.str(k.name)), b}];
      g.kind = b;
      g.add(u, k.dur_ns);
    }
    int64_t device_ns = index.device_busy_ns();
    for (const auto& [key, g] : groups) {
      double s = share(g.time_ns, device_ns);
      if (s < kMinDeviceShare) continue;
      Units m = g.mean();
      Finding f;
      f.rule = std::string(id());
      f.severity = s >= kBoundWarningShare && g.kind != Bottleneck::NoBound ? Severity::Warning : Severity::Info;
      f.location.op = key.first;
      f.metrics = {{"count", double(g.count)},
                   {"time_ns", double(g.time_ns)},
                   {"device_share", s},
                   {"mac_ratio", m.mac},
                   {"vec_ratio", m.vec},
                   {"scalar_ratio", m.scalar},
                   {"mte2_ratio", m.mte2}};
      // What could be won: the part of the time the busiest unit is idle.
      f.cost_ns = int64_t(double(g.time_ns) * std::max(0.0, 1.0 - m.max()));
      std::string head = fmt::format("{}: {} call{}, {} ({} of device time)", key.first, g.count, g.count == 1 ? "" : "s",
                                     format_duration(g.time_ns), format_share(s));
      switch (g.kind) {
        case Bottleneck::CubeWaitsOnData:
          f.message = fmt::format("{}: the cube waits for data (mte2 {:.0f}%, mac {:.0f}%)", head, 100 * m.mte2, 100 * m.mac);
          f.fix = advice("BOUND001", "fix_cube");
          break;
        case Bottleneck::Scalar:
          f.message = fmt::format("{}: the scalar unit is the bottleneck (scalar {:.0f}%, mac {:.0f}%, vec {:.0f}%)", head,
                                  100 * m.scalar, 100 * m.mac, 100 * m.vec);
          f.fix = advice("BOUND001", "fix_scalar");
          break;
        default:
          f.message = fmt::format("{}: no unit is busy ({}); the op is latency-bound or poorly tiled", head, ratios_text(m));
          f.fix = advice("BOUND001", "fix_tune");
          break;
      }
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& bound001_rule() {
  static const PmuBottleneck rule;
  return rule;
}

}  // namespace npud
