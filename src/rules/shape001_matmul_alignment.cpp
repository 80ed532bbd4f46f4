// SHAPE001 matmul-alignment: big matmuls whose inner axis is not a multiple of 256 elements,
// the advisor's "Cube Operator Perf Analysis" affinity check (msprof-analyze
// ai_core_performance_checker.py). See docs/rules/SHAPE001.md.
#include <algorithm>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "knowledge/advice_texts.hpp"
#include "model/trace.hpp"
#include "analysis/trace_index.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/kernel_shapes.hpp"
#include "rules/rule_support.hpp"
#include "util/text.hpp"

namespace npud {
namespace {

constexpr int64_t kInnerAxis = 256;                  // the advisor's INNER_AXIS_256 (elements, any dtype)
constexpr double kMinMiB = 100;                      // CUBE_OPERATOR_MEMORY_SIZE_MB, summed over calls
constexpr double kMatmulWarningShare = 0.05;

// The inner axis of each of the first two inputs: ND keeps it last; the 4-D fractal NZ layout
// (N1, K1, K0, N0...) splits it over dims 1 and 2, as the advisor reads it.
std::optional<std::pair<int64_t, int64_t>> inner_axes(const std::vector<KernelShape>& in) {
  if (in.size() < 2 || in[0].size() < 2 || in[1].size() < 2) return std::nullopt;
  if (in[0].size() == 4 && in[1].size() == 4) return std::pair{in[0][1] * in[0][2], in[1][1] * in[1][2]};
  return std::pair{in[0].back(), in[1].back()};
}

// Bytes one call moves by the advisor's estimate: every input and output element at 2 bytes.
double call_mib(const std::vector<KernelShape>& in, const std::vector<KernelShape>& out) {
  double elements = 0;
  for (const auto* list : {&in, &out})
    for (const KernelShape& s : *list)
      if (!s.empty()) elements += double(numel(s));
  return elements * 2 / 1024 / 1024;
}

class MatmulAlignment final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"SHAPE001", "matmul-alignment",
        "large matmuls whose inner axis is not a multiple of 256 elements (NPU profiles with shapes)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (t.kernel_details.empty()) return;
    auto groups = group_by_shape(t, [&](const Kernel& k, const KernelDetail& d) {
      return k.kind != TaskKind::AiCpu && d.input_shapes != 0 && icontains(t.str(d.op_type), "matmul");
    });
    int64_t device_ns = ctx.index().device_busy_ns();
    for (const KernelShapeGroup& g : groups) {
      auto in = parse_kernel_shapes(g.input_shapes);
      auto res = parse_kernel_shapes(g.output_shapes);
      if (!in || !res) continue;
      auto axes = inner_axes(*in);
      if (!axes || (axes->first % kInnerAxis == 0 && axes->second % kInnerAxis == 0)) continue;
      double mib = call_mib(*in, *res) * double(g.count);
      if (mib < kMinMiB) continue;
      double s = share(g.time_ns, device_ns);
      Finding f;
      f.rule = std::string(id());
      f.severity = s >= kMatmulWarningShare ? Severity::Warning : Severity::Info;
      f.location.op = g.op;
      int64_t bad = axes->first % kInnerAxis != 0 ? axes->first : axes->second;
      f.metrics = {{"count", double(g.count)},
                   {"time_ns", double(g.time_ns)},
                   {"device_share", s},
                   {"inner_axis", double(bad)},
                   {"mib", mib}};
      // The padded tile's idle share is the least the misalignment costs.
      int64_t padded = (bad + kInnerAxis - 1) / kInnerAxis * kInnerAxis;
      f.cost_ns = padded > 0 ? int64_t(double(g.time_ns) * double(padded - bad) / double(padded)) : 0;
      f.message = fmt::format("{} ({}): {} call{} with inputs {} ({}), {} ({} of device time): inner axis {} is not a "
                              "multiple of {}",
                              g.op, g.op_type, g.count, g.count == 1 ? "" : "s", shapes_text(*in), distinct_items(g.dtypes),
                              format_duration(g.time_ns), format_share(s), bad, kInnerAxis);
      f.fix = advice("SHAPE001", "fix", {{"multiple", kInnerAxis}, {"axis", bad}, {"padded", padded}});
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& shape001_rule() {
  static const MatmulAlignment rule;
  return rule;
}

}  // namespace npud
