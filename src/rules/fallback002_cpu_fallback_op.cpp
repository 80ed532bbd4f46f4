// FALLBACK002 cpu-fallback-op: host aten ops that have no NPU kernel in the chosen
// torch_npu version's op list, so on an NPU they would run on the CPU (torch >= 2.1),
// run on CPU by wrapper / raise (1.11, 2.0), plus ops NPU-FACTS.md names as doing silent
// host or AI-CPU work. See docs/rules/FALLBACK002.md.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "knowledge/knowledge.hpp"
#include "knowledge/npu_coverage.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/dispatch_view.hpp"
#include "rules/npu_cost.hpp"
#include "rules/npu_facts.hpp"
#include "rules/rule_support.hpp"
#include "util/saturate.hpp"

namespace npud {
namespace {

enum Verdict : int { kNone_ = 0, kSilentWork, kFallsBack, kNoKernelLegacy, kToCpu, kUnsupported, kSparse };

// A sparse (COO, CSR...) tensor input: on an NPU the call needs a SparsePrivateUse1 kernel,
// which only op-plugin's `sparse_op_api` entries register; torch_npu's CPU fallback is for
// dense tensors, so any other op raises NotImplementedError there.
bool has_sparse_input(const Trace& t, const Op& op) {
  for (uint32_t r : t.inputs(op))
    if (t.tensors[r].layout) return true;
  return false;
}

bool has_sparse_kernel(const KnowledgeVersion& kv, std::string_view name) {
  return kv.impl_of(name).find("sparse_op_api") != std::string_view::npos;
}

std::string sparse_kernels(const KnowledgeVersion& kv) {
  std::vector<std::string> names;
  for (const auto& [op, impl] : kv.list().impl)
    if (impl.find("sparse_op_api") != std::string::npos) names.push_back(op);
  std::sort(names.begin(), names.end());
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

// Ops that are never a fallback by themselves: views and metadata handled generically by
// PyTorch (CompositeExplicitAutograd) and common composites whose parts are what runs.
// Listed here too so that a composite list that misses one of them does not turn every
// trace into a fallback report.
bool is_backend_agnostic(std::string_view base) {
  static constexpr std::string_view kOps[] = {
      "detach", "detach_", "alias", "_reshape_alias", "expand", "expand_as", "permute", "t", "t_",
      "transpose", "transpose_", "select", "slice", "unsqueeze", "unsqueeze_", "squeeze", "squeeze_",
      "view", "_unsafe_view", "view_as", "reshape", "reshape_as", "split", "split_with_sizes", "chunk",
      "narrow", "unbind", "lift_fresh", "result_type", "set_", "record_stream", "resolve_conj",
      "resolve_neg", "diagonal", "movedim", "flatten", "unflatten", "contiguous", "to", "size", "stride",
      "numel", "dim", "is_same_size", "_has_compatible_shallow_copy_type", "requires_grad_", "retain_grad",
      "output_nr", "_version", "is_leaf", "data", "set_data", "_fw_primal", "lift", "empty", "empty_like",
      "_to_copy", "type_as", "matmul", "linear", "dropout", "layer_norm", "conv2d", "batch_norm",
  };
  for (auto op : kOps)
    if (base == op) return true;
  return false;
}

// Implementation ops of other backends, which an NPU run never reaches.
bool is_other_backend_impl(std::string_view base) {
  for (std::string_view prefix : {"cudnn_", "_cudnn_", "miopen_", "_miopen_", "mkldnn_", "_mkldnn_", "_cufft_",
                                  "cufft_", "_nnpack_", "_fused_sdp_choice", "_efficient_attention",
                                  "_flash_attention", "_scaled_dot_product_cudnn", "_scaled_dot_product_efficient",
                                  "_scaled_dot_product_flash"})
    if (base.starts_with(prefix)) return true;
  return false;
}

// `name` ("add.Tensor" / "add") in one of the 1.11/2.0 lists, which spell overloads.
bool in_legacy_list(const std::unordered_set<std::string>& list, std::string_view name) {
  if (list.empty()) return false;
  if (list.count(std::string(name))) return true;
  std::string_view base = aten_base(name);
  if (list.count(std::string(base))) return true;
  if (base.size() != name.size()) return false;  // a specific overload: only exact matches count
  for (const auto& e : list)
    if (aten_base(e) == base) return true;
  return false;
}

bool is_legacy_line(std::string_view v) { return v.starts_with("1.") || v.starts_with("2.0"); }

// Captures: tensor id -> the op that cast it to float64 (`.double()`, `.to(torch.float64)`):
// where float64 data is made in the step is the line to change, more than where it is used.
class Float64Casts {
 public:
  void note(const Trace& t, uint32_t i, std::string_view base) {
    const Op& op = t.ops[i];
    if (base != "_to_copy" && base != "to" && base != "type") return;
    auto in = t.inputs(op);
    if (in.empty() || t.tensors[in[0]].scalar_type == DType::F64) return;
    for (uint32_t r : t.outputs(op))
      if (t.tensors[r].id != kUnset && t.tensors[r].scalar_type == DType::F64) made_by_[t.tensors[r].id] = i;
  }
  // The cast that made one of op's float64 inputs, or kNone.
  uint32_t cast_of(const Trace& t, const Op& op) const {
    for (uint32_t r : t.inputs(op)) {
      const TensorMeta& m = t.tensors[r];
      if (m.id == kUnset || m.scalar_type != DType::F64) continue;
      if (auto it = made_by_.find(m.id); it != made_by_.end()) return it->second;
    }
    return kNone;
  }

 private:
  std::unordered_map<int64_t, uint32_t> made_by_;
};

// Views and copies move float64 data without computing on it; the op that computes is judged.
bool moves_data_only(std::string_view base) {
  for (std::string_view op : {"copy_", "_to_copy", "to", "clone", "contiguous", "lift_fresh", "detach", "empty_like",
                              "zeros_like", "ones_like", "full_like", "item", "_local_scalar_dense", "new_empty",
                              "new_zeros", "empty_strided", "set_", "fill_", "zero_", "resize_"})
    if (base == op) return true;
  return is_backend_agnostic(base);
}

OpCallFacts call_facts(const Trace& t, const Op& op, std::string_view base, bool args_known) {
  OpCallFacts c;
  c.base = base;
  c.args_known = args_known;
  c.args = op.detail ? t.str(op.detail) : std::string_view{};
  auto in = t.inputs(op);
  bool dtype_seen = false;
  for (size_t k = 0; k < in.size(); ++k) {
    const TensorMeta& m = t.tensors[in[k]];
    if (!m.is_tensor) continue;
    if (!dtype_seen && !t.str(m.dtype).empty()) {   // the first input whose dtype was recorded
      c.dtype = m.scalar_type;
      dtype_seen = true;
    }
    if (m.scalar_type == DType::F64 && m.has_shape && numel(t.shape(m)) > 1)
      c.has_float64 = true;
  }
  if (moves_data_only(base)) c.has_float64 = false;
  return c;
}

// What the group costs on an NPU (docs/cost-model.md). A profile's host time is the cost as
// measured (a lower bound: the copies come on top). A capture ran elsewhere: a CPU fallback
// (or a call that raises, ranked the same) moves its tensors over the link with a sync and
// runs on the host for the time it took here; silent work is one AI-CPU task per call.
int64_t estimated_cost(const Trace& t, const EventGroup& g) {
  if (!t.caps.estimated_costs) return g.time_ns;
  if (g.category == kSilentWork) return saturating_ns(double(g.count) * cost::kAiCpuTaskNs);
  return saturating_ns(double(g.count) * cost::kSyncNs + double(g.bytes) / cost::kLinkBytesPerNs +
                       double(g.self_ns));
}

class CpuFallbackOp final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"FALLBACK002", "cpu-fallback-op",
        "aten ops without an NPU kernel in the chosen torch_npu op list (would run on the CPU)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    Scan s(ctx);
    find_fallback_calls(s);
    report(s, out);
  }

 private:
  // What the phases share: the op list, the groups found so far, per-op marks and the
  // per-name caches.
  struct Scan {
    explicit Scan(const AnalysisContext& ctx)
        : t(ctx.trace), kv(ctx.npu), index(ctx.index()), dispatch(t, kv), legacy(is_legacy_line(kv.version)),
          flagged(t.ops.size(), 0), covered(t.ops.size(), 0), exact(t.caps.dispatched_ops) {}

    const Trace& t;
    const KnowledgeVersion& kv;
    const TraceIndex& index;
    const DispatchView dispatch;
    const bool legacy;
    GroupMap groups;
    std::vector<uint8_t> flagged, covered;
    // Verdicts per distinct name: the lookups are string work, ops repeat a lot. The
    // dtype- and argument-driven facts are judged per call.
    std::unordered_map<StrId, int> verdicts;
    std::unordered_map<std::string, std::string_view> fix_of_fact;
    std::unordered_map<std::string, std::string> missing_out;   // wrappers of structured ops: the out overload the NPU lacks
    // Captures keep overload names: a bare "aten::mode" is the default overload, never
    // `mode.dimname`. Other sources drop them, and then any listed overload counts.
    const bool exact;

    // Whether an op's name has an NPU kernel, cached per distinct name.
    std::unordered_map<StrId, bool> has_kernel;
    bool listed(const Op& op) {
      auto [it, inserted] = has_kernel.try_emplace(op.name, false);
      if (inserted) it->second = exact ? kv.has_npu_kernel_exact(t.str(op.name)) : kv.has_npu_kernel(t.str(op.name));
      return it->second;
    }
    Float64Casts casts;
  };

  // Judges every aten call not covered by a reported or NPU-implemented caller, and groups
  // the ones that fall back, raise or do silent host work.
  static void find_fallback_calls(Scan& s) {
    const Trace& t = s.t;
    for (uint32_t i = 0; i < t.ops.size(); ++i) {
      const Op& op = t.ops[i];
      if (op.kind == OpKind::Aten && op.outputs_count) s.casts.note(t, i, aten_base(t.str(op.name)));
      mark_covered(s, i);
      if (op.kind != OpKind::Aten || s.covered[i]) continue;
      std::string_view full = t.str(op.name);
      if (!is_aten_name(full)) continue;  // npu::, c10d::, profiler ranges
      std::string_view base = aten_base(full);
      int verdict = name_verdict(s, op, full, base);
      HostWorkFact fact;
      if (!is_backend_agnostic(base) && has_sparse_input(t, op) && !has_sparse_kernel(s.kv, strip_aten(full))) {
        verdict = kSparse;   // whatever its dense kernels: the sparse call fails first
      } else if (verdict == kNone_) {
        fact = silent_host_work_fact(call_facts(t, op, base, s.exact));
        if (fact.text.empty()) continue;
        verdict = kSilentWork;
      }
      s.flagged[i] = 1;
      add_call(s, i, full, verdict, fact);
    }
  }

  static void mark_covered(Scan& s, uint32_t i) {
    const Trace& t = s.t;
    const Op& op = t.ops[i];
    // Covered: an enclosing op is already reported, or has its own NPU kernel (then
    // on NPU the ops it called here, e.g. CUDA's cudnn_* implementations or the kernel
    // ops of a CompositeExplicitAutograd op, never run), or is an API call torch_npu
    // implements itself (F.scaled_dot_product_attention).
    if (op.parent != kNone) {
      const Op& parent = t.ops[op.parent];
      s.covered[i] = s.covered[op.parent] || s.flagged[op.parent] || parent.kind == OpKind::Api ||
                     (parent.kind == OpKind::Aten && is_aten_name(t.str(parent.name)) && s.listed(parent));
    }
  }

  // The verdict on op's name (whether the chosen op list has an NPU kernel for it), cached per name.
  static int name_verdict(Scan& s, const Op& op, std::string_view full, std::string_view base) {
    const KnowledgeVersion& kv = s.kv;
    auto it = s.verdicts.find(op.name);
    if (it == s.verdicts.end()) {
      int v = kNone_;
      std::string_view name = strip_aten(full);
      if (base.starts_with("npu_") || kv.is_custom(base) || base.empty()) {
        // torch_npu's own ops
      } else if (is_other_backend_impl(base)) {
        // CUDA/ROCm/oneDNN implementation ops: on NPU their parent dispatches elsewhere
      } else if (in_legacy_list(kv.list().unsupported, name)) {
        v = kUnsupported;
      } else if (in_legacy_list(kv.list().tocpu, name)) {
        v = kToCpu;
      } else if (!s.listed(op) && !is_backend_agnostic(base)) {
        CoverageAnswer c = npu_coverage(kv, full, s.exact, s.dispatch.kind(op.name, s.exact), s.dispatch.table(),
                                        s.dispatch.column());
        // Coverage::GenericPerTensor (a foreach overload torch's composite kernel runs as one NPU
        // op per tensor) is no finding: nothing falls back, nothing the user sets removes it
        // (issue 45; the clipping multiply of clip_grad_norm_ is the usual one).
        if (c.coverage == Coverage::FallsBack) v = s.legacy ? kNoKernelLegacy : kFallsBack;
        if (!c.missing.empty()) s.missing_out.emplace(full, std::move(c.missing));
      }
      it = s.verdicts.emplace(op.name, v).first;
    }
    return it->second;
  }

  // Adds flagged call i to its group: its time, self time and the bytes of its tensors.
  static void add_call(Scan& s, uint32_t i, std::string_view full, int verdict, const HostWorkFact& fact) {
    const Trace& t = s.t;
    const Op& op = t.ops[i];
    Location loc = location_of(s.index, i);
    bool created = false;
    // Silent work groups by op and fact (int argsorts and isin calls are two problems);
    // float64 data is one problem whatever ops it flows through.
    // Sparse tensors are one problem too, whatever ops they reach.
    EventGroup& g = s.groups.get(verdict == kSparse ? std::string("sparse")
                                 : fact.dtype_wide  ? std::string(fact.text)
                                                    : fmt::format("{}\x1f{}\x1f{}", full, verdict, fact.text),
                                 &created);
    g.add_example(full, 4);
    if (created) {
      if (uint32_t cast = fact.dtype_wide ? s.casts.cast_of(t, op) : kNone; cast != kNone)
        loc = location_of(s.index, cast);
      g.what = std::string(full);
      g.location = std::move(loc);  // first user frame seen (float64: the cast that made it)
      g.category = verdict;
      g.context = std::string(fact.text);
      s.fix_of_fact.emplace(g.context, fact.fix);
    }
    g.add(op.step_index, op.dur_ns);
    add_saturating(g.self_ns, op.self_ns);
    for (auto refs : {t.inputs(op), t.outputs(op)})
      for (uint32_t r : refs)
        if (t.tensors[r].is_tensor) add_saturating(g.bytes, tensor_bytes(t, t.tensors[r]));
  }

  // One finding per group, in the order the groups were made.
  static void report(Scan& s, std::vector<Finding>& out) {
    const TraceIndex& index = s.index;
    const std::string wheel = fmt::format("torch_npu {}", s.kv.version);
    OpCallFacts float64_call;
    float64_call.has_float64 = true;
    const std::string float64_fact(silent_host_work_fact(float64_call).text);
    const int64_t wall = index.wall_ns();
    for (EventGroup& g : s.groups.groups()) {
      const int64_t self_ns = g.self_ns;
      const double per_step = index.per_step(g.in_steps, g.in_first_step, g.count);
      Finding f;
      f.rule = "FALLBACK002";
      std::string counts = fmt::format("{} call{}{}, {} self time", g.count, g.count == 1 ? "" : "s",
                                       per_step_note(index, g),
                                       format_duration(self_ns));
      describe(g, wheel, float64_fact, counts, f);
      f.location = g.location;
      f.metrics = {{"count", double(g.count)},
                   {"per_step", per_step},
                   {"self_ns", double(self_ns)},
                   {"time_ns", double(g.time_ns)},
                   {"time_share", share(g.time_ns, wall)}};
      f.cost_ns = estimated_cost(s.t, g);
      advise(s, g, wheel, f);
      out.push_back(std::move(f));
    }
  }

  // The finding's severity and message, by the group's verdict.
  static void describe(const EventGroup& g, const std::string& wheel, const std::string& float64_fact,
                       const std::string& counts, Finding& f) {
    switch (g.category) {
      case kUnsupported:
        f.severity = Severity::Error;
        f.message = fmt::format("{} is registered as unsupported (raises) in {}: {}", g.what, wheel, counts);
        break;
      case kToCpu:
        f.severity = Severity::Warning;
        f.message = fmt::format("{} runs on the CPU in {} (the wrapper copies to the host): {}", g.what, wheel, counts);
        break;
      case kNoKernelLegacy:
        f.severity = Severity::Warning;
        f.message = fmt::format("{} has no NPU kernel in {} (no automatic CPU fallback in this line, the call may "
                                "raise): {}",
                                g.what, wheel, counts);
        break;
      case kSparse:
        f.severity = Severity::Error;
        f.message = fmt::format("sparse tensors reach {}{}, which have no sparse NPU kernel in {}: on an NPU these "
                                "calls raise NotImplementedError (the CPU fallback covers dense tensors only): {}",
                                fmt::join(g.examples, ", "), g.examples.size() >= 4 ? ", ..." : "", wheel, counts);
        break;
      case kFallsBack:
        f.severity = Severity::Warning;
        f.message = fmt::format("{} has no NPU kernel in {}, would fall back to the CPU: {}", g.what, wheel, counts);
        break;
      default:
        f.severity = Severity::Info;
        if (g.context == float64_fact)
          f.message = fmt::format("float64 tensors reach compute ops ({}{}), which run on the AI-CPU on NPU: {}",
                                  fmt::join(g.examples, ", "), g.examples.size() >= 4 ? ", ..." : "", counts);
        else
          f.message = fmt::format("{} does silent host/AI-CPU work on NPU: {}", g.what, counts);
    }
  }

  // The finding's fix and notes.
  static void advise(Scan& s, const EventGroup& g, const std::string& wheel, Finding& f) {
    const KnowledgeVersion& kv = s.kv;
    if (g.category == kSilentWork) {
      f.fix = std::string(s.fix_of_fact[g.context]);
    } else if (g.category == kSparse) {
      f.fix = advice("FALLBACK002", "fix_sparse", {{"wheel", wheel}, {"kernels", sparse_kernels(kv)}});
    } else {
      f.fix = advice("FALLBACK002", "fix", {{"op", g.what}});
    }
    if (!g.context.empty()) f.notes.push_back(advice("FALLBACK002", "fact_note", {{"fact", g.context}}));
    if (auto m = s.missing_out.find(g.what); m != s.missing_out.end())
      f.notes.push_back(advice("FALLBACK002", "redispatch_note", {{"inner", m->second}, {"wheel", wheel}}));
    if (g.category == kFallsBack)
      f.notes.push_back(advice("FALLBACK002", "dispatch_facts_note", {{"facts", s.dispatch.describe()}}));
    if (g.category == kFallsBack)
      f.notes.push_back(advice("FALLBACK002", "warning_note", {{"op", g.what}}));
    if (g.category != kSilentWork) {
      f.notes.push_back(advice("FALLBACK002", "op_list_note", {{"list", kv.describe()}}));
      if (!kv.is_release())
        f.notes.push_back(advice("FALLBACK002", "dev_tip_note"));
      if (!s.exact)
        f.notes.push_back(advice("FALLBACK002", "base_name_note", {{"op", g.what}}));
    }
  }
};

}  // namespace

const Rule& fallback002_rule() {
  static const CpuFallbackOp rule;
  return rule;
}

}  // namespace npud
