// CONTIG001 contiguity-copy: copies made only to change a tensor's memory layout, on the
// host side (contiguous/clone/copy_/reshape of strided views) and on the device side
// (TransData, ViewCopy, AsStrided, framework-inserted trans_* tasks).
// See docs/rules/CONTIG001.md.
#include <span>
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
    Scan s(ctx);
    find_host_copies(s);
    add_sdpa_output_copies(s.t, s.index, s.groups);
    join_backward_copies(s);
    add_device_tasks(s);
    report(s, out);
  }

 private:
  // What the phases share: the groups found so far and the per-op state of the op scan.
  struct Scan {
    explicit Scan(const AnalysisContext& ctx)
        : t(ctx.trace), index(ctx.index()), inside_matmul(copies_inside_matmul_calls(t, index)), n(t.ops.size()),
          anchor(n, 0), covered(n, 0) {}

    const Trace& t;
    const TraceIndex& index;
    const std::vector<uint8_t> inside_matmul;
    GroupMap groups;
    const size_t n;
    std::vector<uint8_t> anchor, covered;
    // Previous sibling on the same thread: the op that ran just before under the same parent.
    std::unordered_map<uint32_t, uint32_t> last_child;
    std::vector<std::pair<uint32_t, std::string>> backward;   // joins its line's forward copy
    TensorProducers producers;   // as CONTIG002 keeps them: the aten ops outside composites
  };

  // A copy op being judged: its previous sibling, the input whose layout matters and what
  // makes it a layout copy.
  struct CopyCall {
    uint32_t i;
    std::string_view base;
    uint32_t prev;
    std::span<const uint32_t> in;
    size_t which;
    std::string trigger;
  };

  // Host-side layout copies: contiguous/clone/copy_/reshape/flatten calls that copy a strided tensor.
  static void find_host_copies(Scan& s) {
    const Trace& t = s.t;
    const TraceIndex& index = s.index;
    for (uint32_t i = 0; i < s.n; ++i) {
      const Op& op = t.ops[i];
      if (i > 0 && t.ops[i - 1].kind == OpKind::Aten && !index.inside_composite(i - 1)) s.producers.record(t, i - 1);
      if (i > 0 && (t.ops[i - 1].pid != op.pid || t.ops[i - 1].tid != op.tid)) s.last_child.clear();
      uint32_t prev = kNone;
      if (auto it = s.last_child.find(op.parent); it != s.last_child.end()) prev = it->second;
      s.last_child[op.parent] = i;
      if (op.parent != kNone) s.covered[i] = s.covered[op.parent] || s.anchor[op.parent];
      if (op.kind != OpKind::Aten || s.covered[i] || index.inside_composite(i)) continue;
      std::string_view base = aten_base(t.str(op.name));
      if (!is_layout_copy_op(base)) continue;
      if (i < s.inside_matmul.size() && s.inside_matmul[i]) continue;   // CONTIG002's implicit input

      // reshape/flatten copy only when they have to: a clone/copy_ child says they did.
      if ((base == "reshape" || base == "flatten") && !reshape_copied(s, i)) continue;

      // The input whose layout matters: copy_(self, src) reads src, the others read self.
      size_t which = base == "copy_" ? 1 : 0;
      CopyCall c{i, base, prev, t.inputs(op), which, {}};
      if (!copy_trigger(s, c)) continue;
      s.anchor[i] = 1;
      add_host_copy(s, c);
    }
  }

  // Whether the reshape/flatten op i copied: a clone/copy_/contiguous ran inside it.
  static bool reshape_copied(const Scan& s, uint32_t i) {
    const Trace& t = s.t;
    const Op& op = t.ops[i];
    bool copied = false;
    for (uint32_t c = i + 1; c < s.n && t.ops[c].pid == op.pid && t.ops[c].tid == op.tid &&
                             t.ops[c].start_ns < op.start_ns + op.dur_ns;
         ++c) {
      std::string_view cb = aten_base(t.str(t.ops[c].name));
      copied = copied || cb == "clone" || cb == "copy_" || cb == "contiguous";
    }
    return copied;
  }

  // What makes the copy a layout copy (its input `which` is strided, or it follows a strided
  // view), into c.trigger; false when it is none worth reporting.
  static bool copy_trigger(const Scan& s, CopyCall& c) {
    const Trace& t = s.t;
    auto& [i, base, prev, in, which, trigger] = c;
    const Op& op = t.ops[i];
    auto out = t.outputs(op);
    if (which < in.size() && t.tensors[in[which]].has_strides && t.tensors[in[which]].has_shape) {
      const TensorMeta& tm = t.tensors[in[which]];
      // A copy of a few KiB is one launch like any small op (a labels slice, a CLS row).
      if (tensor_bytes(t, tm) < kMinCopyBytes) return false;
      if (is_contiguous(t.shape(tm), t.strides(tm))) {
        // ... unless it converts a dense tensor to channels_last (NHWC) every call
        const TensorMeta* o = out.empty() ? nullptr : &t.tensors[out[0]];
        if (!o || !o->has_strides || !is_channels_last(t.shape(*o), t.strides(*o))) return false;
        trigger = "conversion to channels_last";
      } else if (t.caps.dispatched_ops && !strided_on_npu(t, s.producers, tm)) {
        return false;   // strided by a CPU kernel only: dense on the NPU, the copy copies nothing there
      } else {
        trigger = "non-contiguous input";
      }
    } else if (prev != kNone && t.ops[prev].kind == OpKind::Aten &&
               is_strided_view(aten_base(t.str(t.ops[prev].name))) &&
               (base != "copy_" || !is_destination_view(aten_base(t.str(t.ops[prev].name))))) {
      trigger = std::string(t.str(t.ops[prev].name));
    } else {
      return false;
    }
    return true;
  }

  // Adds the layout copy to its line's group, or keeps it for its forward copy when it is a
  // backward one.
  static void add_host_copy(Scan& s, const CopyCall& c) {
    const Trace& t = s.t;
    const auto& [i, base, prev, in, which, trigger] = c;
    const Op& op = t.ops[i];
    BackwardUse use = backward_use(t, op);
    if (use == BackwardUse::Skip) return;
    Location loc = location_of(s.index, i);
    std::string key = fmt::format("h\x1f{}\x1f{}", loc.op, site_key(loc));
    if (use == BackwardUse::JoinForward) {
      s.backward.emplace_back(i, std::move(key));
      return;
    }
    bool created = false;
    // One line is one finding, whichever layer (module) ran it: the other modules are notes.
    EventGroup& g = s.groups.get(key, &created);
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

  // Backward copies count with the forward copy of their line, when it was reported.
  static void join_backward_copies(Scan& s) {
    const Trace& t = s.t;
    for (const auto& [i, key] : s.backward)
      if (EventGroup* g = s.groups.find(key)) {
        g->add(t.ops[i].step_index, t.ops[i].dur_ns);
        auto in = t.inputs(t.ops[i]);
        if (!in.empty()) add_saturating(g->bytes, tensor_bytes(t, t.tensors[in[0]]));
      }
  }

  // Device-side layout/format conversion tasks, grouped by task name.
  static void add_device_tasks(Scan& s) {
    const Trace& t = s.t;
    const TraceIndex& index = s.index;
    for (const Kernel& k : t.kernels) {
      if (k.kind == TaskKind::AiCpu) continue;  // FALLBACK001 reports AI-CPU tasks
      std::string_view raw = t.str(k.name);
      if (!is_layout_task(raw)) continue;
      std::string name = normalize_task_name(raw);
      bool created = false;
      EventGroup& g = s.groups.get("d\x1f" + name, &created);
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
  }

  // One finding per group, in the order the groups were made.
  static void report(Scan& s, std::vector<Finding>& out) {
    const Trace& t = s.t;
    const TraceIndex& index = s.index;
    for (EventGroup& g : s.groups.groups()) {
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
        describe_host_copy(s, g, per_step, rate, f);
      } else {
        describe_device_tasks(s, g, per_step, rate, f);
      }
      if (g.modules.size() > 1) f.notes.push_back(modules_note(g));
      out.push_back(std::move(f));
    }
  }

  static void describe_host_copy(const Scan& scan, const EventGroup& g, double per_step, const std::string& rate,
                                 Finding& f) {
    const Trace& t = scan.t;
    const TraceIndex& index = scan.index;
    const int64_t wall = index.wall_ns();
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
  }

  static void describe_device_tasks(const Scan& scan, const EventGroup& g, double per_step, const std::string& rate,
                                    Finding& f) {
    const int64_t device_ns = scan.index.device_busy_ns();
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
};

}  // namespace

const Rule& contig001_rule() {
  static const ContiguityCopy rule;
  return rule;
}

}  // namespace npud
