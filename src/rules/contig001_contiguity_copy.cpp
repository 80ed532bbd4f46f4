// CONTIG001 contiguity-copy: copies made only to change a tensor's memory layout, on the
// host side (contiguous/clone/copy_/reshape of strided views) and on the device side
// (TransData, ViewCopy, AsStrided, framework-inserted trans_* tasks).
// See docs/rules/CONTIG001.md.
#include <unordered_map>

#include <algorithm>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/capture_rules.hpp"
#include "rules/npu_cost.hpp"
#include "rules/layout_support.hpp"
#include "rules/rule_support.hpp"
#include "util/saturate.hpp"

namespace npud {
namespace {

enum Side : int { kHost = 0, kDevice = 1 };

// Copies smaller than this are one launch like any small op: not a finding (CONTIG002 too).
constexpr int64_t kMinCopyBytes = 4096;

// Ops that produce a strided (non-contiguous) view.
bool is_strided_view(std::string_view base) {
  return base == "permute" || base == "transpose" || base == "t" || base == "expand" || base == "expand_as" ||
         base == "narrow" || base == "slice" || base == "as_strided" || base == "movedim" || base == "swapaxes" ||
         base == "unfold" || base == "diagonal";
}

// `x[:, :k].copy_(y)` slices the destination first: not a layout copy of the source.
bool is_destination_view(std::string_view base) {
  return base == "slice" || base == "narrow" || base == "as_strided" || base == "diagonal";
}

bool is_layout_copy_op(std::string_view base) {
  return base == "contiguous" || base == "clone" || base == "copy_" || base == "reshape" || base == "flatten";
}

bool is_layout_task(std::string_view name) {
  return name.find("TransData") != std::string_view::npos || name.find("ViewCopy") != std::string_view::npos ||
         name.find("AsStrided") != std::string_view::npos || name.starts_with("trans_");
}

// On an NPU, F.scaled_dot_product_attention returns a dense [batch, heads, seq, dim] output
// (torch_npu's fused kernel). A CPU flash kernel may return it in [batch, seq, heads, dim]
// memory order instead, so the usual `out.transpose(1, 2).contiguous()` after it copies nothing
// here and the whole output there: found (captures) from the transpose of such an output.
void add_sdpa_output_copies(const Trace& t, const TraceIndex& index, GroupMap& groups) {
  std::unordered_map<int64_t, int64_t> strided_outputs;   // SDPA output tensor id -> bytes
  for (uint32_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    if (op.kind == OpKind::Api && t.str(op.name) == "torch.nn.functional.scaled_dot_product_attention") {
      for (uint32_t r : t.outputs(op)) {
        const TensorMeta& m = t.tensors[r];
        if (m.id != kUnset && m.has_strides && m.rank == 4 && !is_contiguous(t.shape(m), t.strides(m)) &&
            tensor_bytes(t, m) >= kMinCopyBytes)
          strided_outputs[m.id] = tensor_bytes(t, m);
      }
      continue;
    }
    if (op.kind != OpKind::Aten || strided_outputs.empty() || op.backward) continue;
    auto in = t.inputs(op);
    if (in.empty() || aten_base(t.str(op.name)) != "transpose") continue;
    auto it = strided_outputs.find(t.tensors[in[0]].id);
    if (it == strided_outputs.end()) continue;
    Location loc = location_of(index, i);
    loc.op = "aten::clone";
    bool created = false;
    EventGroup& g = groups.get(fmt::format("h\x1f{}\x1f{}", loc.op, site_key(loc)), &created);
    if (created) {
      g.what = loc.op;
      g.category = kHost;
      g.location = loc;
    }
    if (!loc.module.empty()) g.add_module(loc.module);
    g.add(op.step_index, 0);
    add_saturating(g.bytes, it->second);
    g.add_example("the transpose of SDPA's output, dense [batch, heads, seq, dim] on an NPU (a no-op copy on this CPU)");
    strided_outputs.erase(it);
  }
}

class ContiguityCopy final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"CONTIG001", "contiguity-copy",
        "copies that only change memory layout: .contiguous() after permute/transpose, TransData/ViewCopy tasks",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    const TraceIndex& index = ctx.index();
    const std::vector<uint8_t> inside_matmul = copies_inside_matmul_calls(t, index);
    GroupMap groups;
    const size_t n = t.ops.size();
    std::vector<uint8_t> anchor(n, 0), covered(n, 0);
    // Previous sibling on the same thread: the op that ran just before under the same parent.
    std::unordered_map<uint32_t, uint32_t> last_child;
    std::vector<std::pair<uint32_t, std::string>> backward;   // joins its line's forward copy
    TensorProducers producers;   // as CONTIG002 keeps them: the aten ops outside composites

    for (uint32_t i = 0; i < n; ++i) {
      const Op& op = t.ops[i];
      if (i > 0 && t.ops[i - 1].kind == OpKind::Aten && !index.inside_composite(i - 1)) producers.record(t, i - 1);
      if (i > 0 && (t.ops[i - 1].pid != op.pid || t.ops[i - 1].tid != op.tid)) last_child.clear();
      uint32_t prev = kNone;
      if (auto it = last_child.find(op.parent); it != last_child.end()) prev = it->second;
      last_child[op.parent] = i;
      if (op.parent != kNone) covered[i] = covered[op.parent] || anchor[op.parent];
      if (op.kind != OpKind::Aten || covered[i] || index.inside_composite(i)) continue;
      std::string_view base = aten_base(t.str(op.name));
      if (!is_layout_copy_op(base)) continue;
      if (i < inside_matmul.size() && inside_matmul[i]) continue;   // CONTIG002's implicit input

      // reshape/flatten copy only when they have to: a clone/copy_ child says they did.
      if (base == "reshape" || base == "flatten") {
        bool copied = false;
        for (uint32_t c = i + 1; c < n && t.ops[c].pid == op.pid && t.ops[c].tid == op.tid &&
                                 t.ops[c].start_ns < op.start_ns + op.dur_ns;
             ++c) {
          std::string_view cb = aten_base(t.str(t.ops[c].name));
          copied = copied || cb == "clone" || cb == "copy_" || cb == "contiguous";
        }
        if (!copied) continue;
      }

      // The input whose layout matters: copy_(self, src) reads src, the others read self.
      auto in = t.inputs(op);
      size_t which = base == "copy_" ? 1 : 0;
      std::string trigger;
      auto out = t.outputs(op);
      if (which < in.size() && t.tensors[in[which]].has_strides && t.tensors[in[which]].has_shape) {
        const TensorMeta& tm = t.tensors[in[which]];
        // A copy of a few KiB is one launch like any small op (a labels slice, a CLS row).
        if (tensor_bytes(t, tm) < kMinCopyBytes) continue;
        if (is_contiguous(t.shape(tm), t.strides(tm))) {
          // ... unless it converts a dense tensor to channels_last (NHWC) every call
          const TensorMeta* o = out.empty() ? nullptr : &t.tensors[out[0]];
          if (!o || !o->has_strides || !is_channels_last(t.shape(*o), t.strides(*o))) continue;
          trigger = "conversion to channels_last";
        } else if (t.caps.dispatched_ops && !strided_on_npu(t, producers, tm)) {
          continue;   // strided by a CPU kernel only: dense on the NPU, the copy copies nothing there
        } else {
          trigger = "non-contiguous input";
        }
      } else if (prev != kNone && t.ops[prev].kind == OpKind::Aten &&
                 is_strided_view(aten_base(t.str(t.ops[prev].name))) &&
                 (base != "copy_" || !is_destination_view(aten_base(t.str(t.ops[prev].name))))) {
        trigger = std::string(t.str(t.ops[prev].name));
      } else {
        continue;
      }
      anchor[i] = 1;
      BackwardUse use = backward_use(t, op);
      if (use == BackwardUse::Skip) continue;
      Location loc = location_of(index, i);
      std::string key = fmt::format("h\x1f{}\x1f{}", loc.op, site_key(loc));
      if (use == BackwardUse::JoinForward) {
        backward.emplace_back(i, std::move(key));
        continue;
      }
      bool created = false;
      // One line is one finding, whichever layer (module) ran it: the other modules are notes.
      EventGroup& g = groups.get(key, &created);
      if (created) {
        g.what = loc.op;
        g.category = kHost;
        g.location = loc;
      }
      if (!loc.module.empty()) g.add_module(loc.module);
      g.add(op.step_index, op.dur_ns);
      if (which < in.size()) add_saturating(g.bytes, tensor_bytes(t, t.tensors[in[which]]));
      g.add_example(trigger);
    }

    add_sdpa_output_copies(t, index, groups);

    for (const auto& [i, key] : backward)
      if (EventGroup* g = groups.find(key)) {
        g->add(t.ops[i].step_index, t.ops[i].dur_ns);
        auto in = t.inputs(t.ops[i]);
        if (!in.empty()) add_saturating(g->bytes, tensor_bytes(t, t.tensors[in[0]]));
      }

    for (const Kernel& k : t.kernels) {
      if (k.kind == TaskKind::AiCpu) continue;  // FALLBACK001 reports AI-CPU tasks
      std::string_view raw = t.str(k.name);
      if (!is_layout_task(raw)) continue;
      std::string name = normalize_task_name(raw);
      bool created = false;
      EventGroup& g = groups.get("d\x1f" + name, &created);
      if (created) {
        g.what = name;
        uint32_t op = index.op_of_kernel(k);
        g.location = location_of(index, index.top_aten(op));
        if (!g.location.op.empty()) g.context = g.location.op;
        g.location.op = name;
        g.category = kDevice;
      }
      g.add(k.step_index, k.dur_ns);
    }

    const int64_t wall = index.wall_ns();
    const int64_t device_ns = index.device_busy_ns();
    for (EventGroup& g : groups.groups()) {
      Finding f;
      f.rule = "CONTIG001";
      double per_step = index.per_step(g.in_steps, g.in_first_step, g.count);
      f.location = g.location;
      // A capture's host copies ran on another device: priced as NPU copy tasks (docs/cost-model.md).
      f.cost_ns = g.category == kHost && t.caps.estimated_costs
                      ? saturating_ns(cost::copies_ns(double(g.count), double(g.bytes)))
                      : g.time_ns;
      std::string rate = per_step_note(index, g);
      if (g.category == kHost) {
        double s = share(g.time_ns, wall);
        f.severity = s >= 0.01 ? Severity::Warning : Severity::Info;
        std::string after;
        for (const auto& e : g.examples) after += (after.empty() ? "" : ", ") + e;
        std::string place = where(g.location);
        // A capture's time is this machine's CPU, not the NPU cost ranked by (issue 40: "about
        // 37.6 us lost" beside "19.9 ms"): the message says whose time it is.
        f.message = fmt::format("{}{} copies a strided tensor (after {}): {} call{}{}, {}{} ({} of {} time)", g.what,
                                place == g.what ? "" : " at " + place, after, g.count, g.count == 1 ? "" : "s", rate,
                                format_duration(g.time_ns), t.caps.estimated_costs ? " on this machine's CPU" : "",
                                format_share(s), index.step_count() ? "step" : "trace");
        f.metrics = {{"count", double(g.count)},
                     {"per_step", per_step},
                     {"time_ns", double(g.time_ns)},
                     {"time_share", s}};
        f.fix = advice("CONTIG001", "fix_layout");
        if (std::find(g.examples.begin(), g.examples.end(), "conversion to channels_last") != g.examples.end())
          f.fix = advice("CONTIG", "channels_last_fix");
      } else {
        double s = share(g.time_ns, device_ns);
        f.severity = s >= 0.01 ? Severity::Warning : Severity::Info;
        f.message = fmt::format("{}: {} layout/format conversion task{} on the device{}, {} ({} of device time)",
                                g.what, g.count, g.count == 1 ? "" : "s", rate, format_duration(g.time_ns),
                                format_share(s));
        f.metrics = {{"count", double(g.count)},
                     {"per_step", per_step},
                     {"time_ns", double(g.time_ns)},
                     {"device_share", s}};
        f.fix = advice("CONTIG001", "fix_format_tasks");
        if (!g.context.empty()) f.notes.push_back(advice("CONTIG001", "launched_by_note", {{"context", g.context}}));
      }
      if (g.modules.size() > 1) f.notes.push_back(modules_note(g));
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

const Rule& contig001_rule() {
  static const ContiguityCopy rule;
  return rule;
}

}  // namespace npud
