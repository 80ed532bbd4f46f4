// SHAPE002 attention-alignment: FlashAttention calls whose head dim D or sequence length S is
// not a multiple of 128, the advisor's "FA Operator Perf Analysis" affinity check
// (msprof-analyze ai_core_performance_checker.py _check_fa_inner_axis). See docs/rules/SHAPE002.md.
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

constexpr int64_t kAxis = 128;   // the advisor's INNER_AXIS_128
constexpr double kAttentionWarningShare = 0.05;

struct AttentionDims {
  int64_t head_dim = -1, seq_len = -1;   // -1: not known from the shapes
};

// FlashAttentionScore(Grad) shapes: q is the first input, in BSH/SBH (3-D, H = N x D), BNSD/BSND
// (4-D, D last) or, for varlen kernels, TND (3-D, D last). softmax_max/sum are (B, N, S, 8):
// they give N and S (an output of the forward, an input of the backward).
AttentionDims dims_of(std::string_view kernel_name, const std::vector<KernelShape>& in,
                      const std::vector<KernelShape>& out) {
  AttentionDims d;
  if (in.empty()) return d;
  const KernelShape& q = in[0];
  if (icontains(kernel_name, "varlen")) {
    if (q.size() >= 3) d.head_dim = q[2];
    return d;
  }
  const KernelShape* softmax = nullptr;
  for (const auto* list : {&out, &in})
    for (const KernelShape& s : *list)
      if (!softmax && s.size() == 4 && s[3] == 8) softmax = &s;
  if (softmax) d.seq_len = (*softmax)[2];
  if (q.size() == 4) d.head_dim = q[3];
  else if (q.size() == 3 && softmax && (*softmax)[1] > 0 && q[2] % (*softmax)[1] == 0) d.head_dim = q[2] / (*softmax)[1];
  return d;
}

class AttentionAlignment final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"SHAPE002", "attention-alignment",
        "FlashAttention calls whose head dim or sequence length is not a multiple of 128 (NPU profiles with shapes)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    if (t.kernel_details.empty()) return;
    auto groups = group_by_shape(t, [&](const Kernel&, const KernelDetail& d) {
      std::string_view type = t.str(d.op_type);
      return d.input_shapes != 0 && (type == "FlashAttentionScore" || type == "FlashAttentionScoreGrad");
    });
    int64_t device_ns = ctx.index().device_busy_ns();
    for (const KernelShapeGroup& g : groups) {
      auto in = parse_kernel_shapes(g.input_shapes);
      auto res = parse_kernel_shapes(g.output_shapes);
      if (!in || !res) continue;
      AttentionDims d = dims_of(g.first_name, *in, *res);
      bool bad_d = d.head_dim >= 0 && d.head_dim % kAxis != 0;
      bool bad_s = d.seq_len >= 0 && d.seq_len % kAxis != 0;
      if (!bad_d && !bad_s) continue;
      double s = share(g.time_ns, device_ns);
      Finding f;
      f.rule = std::string(id());
      f.severity = s >= kAttentionWarningShare ? Severity::Warning : Severity::Info;
      f.location.op = g.op;
      f.metrics = {{"count", double(g.count)}, {"time_ns", double(g.time_ns)}, {"device_share", s}};
      if (d.head_dim >= 0) f.metrics.push_back({"head_dim", double(d.head_dim)});
      if (d.seq_len >= 0) f.metrics.push_back({"seq_len", double(d.seq_len)});
      std::string what = bad_d && bad_s ? fmt::format("head dim D={} and sequence length S={} are", d.head_dim, d.seq_len)
                         : bad_d        ? fmt::format("head dim D={} is", d.head_dim)
                                        : fmt::format("sequence length S={} is", d.seq_len);
      f.message = fmt::format("{} ({}): {} call{} with inputs {} ({}), {} ({} of device time): {} not a multiple of {}",
                              g.op, g.op_type, g.count, g.count == 1 ? "" : "s", shapes_text(*in), distinct_items(g.dtypes),
                              format_duration(g.time_ns), format_share(s), what, kAxis);
      f.fix = advice("SHAPE002", "fix");
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& shape002_rule() {
  static const AttentionAlignment rule;
  return rule;
}

}  // namespace npud
