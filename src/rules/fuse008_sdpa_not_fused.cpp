// FUSE008 sdpa-not-fused: F.scaled_dot_product_attention calls that torch_npu cannot send to
// its fused (flash) attention kernel: it takes 4-D (batch, heads, seq, head_dim) inputs and a
// bool or absent mask (NPU-FACTS). Read from the capture's `python_api` events, which record
// the call's q, k, v and mask as the program passed them. See docs/rules/FUSE008.md.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule_support.hpp"

namespace npud {
namespace {

// Category bits: what keeps the call off the fused kernel.
constexpr int kNot4d = 1;
constexpr int kFloatMask = 2;     // 0/-inf values (or not known): a bool mask says the same
constexpr int kBiasMask = 4;      // other values: a position bias (T5, ALiBi) a bool mask would drop

std::string shape_text(const Trace& t, const TensorMeta& m) {
  return m.has_shape ? fmt::format("[{}]", fmt::join(t.shape(m), ",")) : "[?]";
}

class SdpaNotFused final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"FUSE008", "sdpa-not-fused",
        "F.scaled_dot_product_attention calls that miss NPU flash attention (captures): 4-D BNSD inputs, "
        "bool or no mask",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    const TraceIndex& index = ctx.index();
    GroupMap groups;
    for (uint32_t i = 0; i < t.ops.size(); ++i) {
      const Op& op = t.ops[i];
      if (op.kind != OpKind::Api || !t.str(op.name).ends_with("scaled_dot_product_attention")) continue;
      // Made by torch itself (nn.MultiheadAttention turns a bool key_padding_mask into a float
      // one before calling SDPA): those arguments are not the user's to change.
      if (attribute_value(t.str(op.detail), "caller") == "library") continue;
      auto in = t.inputs(op);
      if (in.size() < 3) continue;
      const TensorMeta& q = t.tensors[in[0]];
      const TensorMeta* mask = in.size() > 3 ? &t.tensors[in[3]] : nullptr;
      int why = 0;
      if (q.has_shape && q.rank != 4) why |= kNot4d;
      if (mask && mask->scalar_type != DType::Bool) {
        // The shim read the values where it could (`mask=` in the call's attributes); a per-head
        // float mask [batch, heads, q, k] is a bias too (T5's relative position bias).
        std::string_view kind = attribute_value(t.str(op.detail), "mask");
        auto ms = t.shape(*mask);
        bool per_head = ms.size() == 4 && q.has_shape && q.rank == 4 && ms[1] > 1 && ms[1] == t.shape(q)[1];
        why |= kind == "bias" || (kind.empty() && per_head) ? kBiasMask : kFloatMask;
      }
      if (!why) continue;
      Location loc = location_of(index, i);
      bool created = false;
      EventGroup& g = groups.get(fmt::format("{}\x1f{}", site_key(loc), why), &created);
      if (created) {
        g.location = loc;
        g.category = why;
        std::string detail = fmt::format("q {} {}", shape_text(t, q), t.str(q.dtype));
        if (mask) detail += fmt::format(", attn_mask {} {}", shape_text(t, *mask), t.str(mask->dtype));
        g.context = detail;
        if (op.detail) g.add_example(t.str(op.detail));
      }
      g.add(op.step_index, op.dur_ns);
    }
    for (auto& g : groups.groups()) {
      double per_step = index.per_step(g.in_steps, g.in_first_step, g.count);
      Finding f;
      f.rule = "FUSE008";
      f.severity = Severity::Warning;
      f.location = g.location;
      std::vector<std::string> reasons, fixes;
      if (g.category & kNot4d) {
        reasons.push_back("its inputs are not 4-D");
        fixes.push_back(advice("FUSE008", "fix_not_4d"));
      }
      if (g.category & kFloatMask) {
        reasons.push_back("its attn_mask is a float (additive) mask");
        fixes.push_back(advice("FUSE008", "fix_float_mask"));
      }
      if (g.category & kBiasMask) {
        reasons.push_back("its attn_mask is a float mask that carries values (a position bias: T5, ALiBi)");
        fixes.push_back(advice("FUSE008", "fix_bias_mask"));
      }
      f.message = fmt::format(
          "F.scaled_dot_product_attention at {} misses torch_npu's fused attention: {} ({}): {} call{}{}",
          where(g.location), fmt::join(reasons, " and "), g.context, g.count, g.count == 1 ? "" : "s",
          per_step_note(index, g));
      f.fix = advice("FUSE008", "fix", {{"fixes", fmt::format("{}", fmt::join(fixes, "; "))}});
      if (!g.examples.empty()) f.notes.push_back(advice("FUSE008", "call_note", {{"call", g.examples.front()}}));
      f.metrics = {{"count", double(g.count)}, {"per_step", per_step}, {"time_ns", double(g.time_ns)}};
      f.cost_ns = g.time_ns;
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& fuse008_rule() {
  static const SdpaNotFused rule;
  return rule;
}

}  // namespace npud
