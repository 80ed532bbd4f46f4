// CONTIG002 noncontiguous-input: compute ops (matmul, conv, norms, softmax, large
// elementwise ops) fed a non-contiguous tensor, read from a capture's per-input strides and
// tensor ids. On Ascend a strided input costs a ViewCopy/contiguous copy before the kernel.
// Two shapes of the problem are found:
//   direct:   the op's input itself is strided (e.g. softmax(x.transpose(1, 2)));
//   implicit: PyTorch copied it just before, inside the same call (matmul/linear reshape
//             a strided input with clone + _unsafe_view) — the copy still happens on NPU.
// The view op that made the tensor strided is found by walking back through tensor ids.
// See docs/rules/CONTIG002.md.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/capture_rules.hpp"
#include "rules/layout_support.hpp"
#include "rules/npu_cost.hpp"
#include "rules/rule_support.hpp"
#include "util/saturate.hpp"

namespace npud {
namespace {

enum class Family { None, Matmul, Strict, Elementwise };

Family family_of(std::string_view base) {
  static const std::unordered_map<std::string_view, Family> kOps = {
      {"mm", Family::Matmul}, {"bmm", Family::Matmul}, {"addmm", Family::Matmul},
      {"baddbmm", Family::Matmul}, {"addbmm", Family::Matmul}, {"matmul", Family::Matmul},
      {"linear", Family::Matmul}, {"mv", Family::Matmul}, {"addmv", Family::Matmul},
      {"convolution", Family::Strict}, {"_convolution", Family::Strict}, {"conv1d", Family::Strict},
      {"conv2d", Family::Strict}, {"conv3d", Family::Strict}, {"conv_transpose1d", Family::Strict},
      {"conv_transpose2d", Family::Strict}, {"conv_transpose3d", Family::Strict},
      {"native_layer_norm", Family::Strict}, {"layer_norm", Family::Strict},
      {"native_group_norm", Family::Strict}, {"group_norm", Family::Strict},
      {"native_batch_norm", Family::Strict}, {"batch_norm", Family::Strict}, {"rms_norm", Family::Strict},
      {"_softmax", Family::Strict}, {"softmax", Family::Strict}, {"_log_softmax", Family::Strict},
      {"log_softmax", Family::Strict}, {"scaled_dot_product_attention", Family::Strict},
      // torch_npu's aclnn cat makes each strided input dense first (rotary's rotate_half, a KV cache)
      {"cat", Family::Strict},
      {"add", Family::Elementwise}, {"sub", Family::Elementwise}, {"mul", Family::Elementwise},
      {"div", Family::Elementwise},
  };
  auto it = kOps.find(base);
  return it == kOps.end() ? Family::None : it->second;
}

}  // namespace


namespace {

// Elementwise ops are flagged only on tensors this large: small strided reads are cheap.
constexpr int64_t kElementwiseMinBytes = int64_t(1) << 20;
// Below this, a strided input of any op is not worth a finding: its copy is one launch like
// any small op (an LSTMCell's [batch, 1] column of the input sequence, a CLS-token row).
constexpr int64_t kMinBytes = 4096;


bool is_permute_like(std::string_view base) {
  return base == "permute" || base == "transpose" || base == "t" || base == "movedim" || base == "moveaxis" ||
         base == "swapaxes" || base == "swapdims" || base == "numpy_T" || base == "mT" || base == "mH" ||
         base == "adjoint";
}

// Views that only regroup dims (what matmul's reshape does after its copy).
bool is_regroup_view(std::string_view base) {
  return base == "_unsafe_view" || base == "view" || base == "_reshape_alias" || base == "reshape" ||
         base == "unsqueeze" || base == "squeeze" || base == "flatten" || base == "expand";
}

bool is_copy_kernel(std::string_view base) {
  return base == "clone" || base == "contiguous" || base == "copy_" || base == "_to_copy";
}

// Dense row-major once size-1 and broadcast (stride 0) dims are ignored; with
// `allow_swap`, a swap of the last two dims is dense too (matmul takes transposed operands).
bool is_dense(std::span<const int64_t> shape, std::span<const int64_t> strides, bool allow_swap) {
  if (shape.size() != strides.size()) return true;  // unknown: do not accuse
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1 && strides[i] != 0) dims.emplace_back(shape[i], strides[i]);
  auto row_major = [](const std::vector<std::pair<int64_t, int64_t>>& d) {
    int64_t expected = 1;
    for (size_t i = d.size(); i-- > 0;) {
      if (d[i].second != expected) return false;
      expected *= d[i].first;
    }
    return true;
  };
  if (row_major(dims)) return true;
  if (allow_swap && dims.size() >= 2) {
    std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
    return row_major(dims);
  }
  return false;
}

std::string dims_text(std::span<const int64_t> d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

struct InputSite {
  std::string op;            // compute op
  Location location;
  std::vector<size_t> inputs;   // which inputs were strided (first seen first)
  size_t other_ops = 0;      // other compute ops at the same line
  bool implicit = false;
  bool channels_last = false;   // the strided input is an NHWC (channels_last) tensor
  std::string shape, strides;
  std::string maker;         // view op that made the input strided
  std::string maker_where;   // its file:line
  size_t count = 0, in_steps = 0, in_first_step = 0;
  int64_t bytes = 0;         // per call
  int64_t total_bytes = 0;
  int64_t copy_ns = 0;       // measured time of implicit copies (host side of the capture)
};

class NonContiguousInput final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"CONTIG002", "noncontiguous-input",
        "compute ops (matmul, conv, norms, softmax, large elementwise) fed non-contiguous tensors (captures)",
        Severity::Warning};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    const Trace& t = ctx.trace;
    const TraceIndex& index = ctx.index();
    std::vector<InputSite> sites;
    std::unordered_map<std::string, size_t> site_index;
    // One line is one finding (every strided input of every compute op there, forward and
    // backward): the layout is chosen once, at that line.
    std::vector<std::pair<uint32_t, Finding_input>> backward;   // joins the forward site of its line
    constexpr size_t kNoInput = ~size_t(0);   // counted, but not one of the named op's inputs
    auto add = [&](InputSite& s, uint32_t i, size_t k, const Finding_input& found) {
      if (k != kNoInput && std::find(s.inputs.begin(), s.inputs.end(), k) == s.inputs.end()) s.inputs.push_back(k);
      ++s.count;
      if (t.ops[i].step_index >= 0) ++s.in_steps;
      if (t.ops[i].step_index == 0) ++s.in_first_step;
      s.total_bytes += tensor_bytes(t, found.tensor);
      add_saturating(s.copy_ns, found.copy_ns);
    };
    scan(t, index, [&](uint32_t i, size_t k, const Finding_input& found) {
      const Op& op = t.ops[i];
      BackwardUse use = backward_use(t, op);
      if (use == BackwardUse::Skip) return;
      if (use == BackwardUse::JoinForward) {
        backward.emplace_back(i, found);
        return;
      }
      Location loc = location_of(index, i);
      // Inside a package, the strided inputs one view made (a head split's transpose read by
      // rotary, the KV cache and attention) are one cause; so are channels_last inputs (the
      // program's memory format), whichever layer reads them.
      if (!loc.library.empty()) {
        if (is_channels_last(t.shape(found.tensor), t.strides(found.tensor))) {
          loc.library.cause = "channels_last";
        } else if (found.maker != kNone) {
          Location made = location_of(index, found.maker);
          const LibrarySite& m = made.library;
          // one function's views (q, k and v split by three transposes) are one layout choice
          loc.library.cause = m.empty() ? fmt::format("strided by {}:{}", made.file, made.line)
                                        : fmt::format("strided by {}/{} {}", m.package, m.file, m.function);
        }
      }
      auto [it, inserted] = site_index.try_emplace(site_key(loc), sites.size());
      if (inserted) {
        InputSite s;
        s.op = std::string(t.str(op.name));
        s.location = std::move(loc);
        s.implicit = found.implicit;
        s.channels_last = is_channels_last(t.shape(found.tensor), t.strides(found.tensor));
        s.shape = dims_text(t.shape(found.tensor));
        s.strides = dims_text(t.strides(found.tensor));
        s.bytes = tensor_bytes(t, found.tensor);
        if (found.maker != kNone) {
          s.maker = std::string(t.str(t.ops[found.maker].name));
          s.maker_where = index.user_location(found.maker);
        }
        sites.push_back(std::move(s));
      }
      InputSite& s = sites[it->second];
      bool same_op = s.op == t.str(op.name);
      if (!same_op) s.other_ops = 1;
      add(s, i, same_op ? k : kNoInput, found);
    });
    for (const auto& [i, found] : backward) {
      auto it = site_index.find(site_key(location_of(index, i)));
      if (it != site_index.end()) add(sites[it->second], i, kNoInput, found);
    }
    for (const InputSite& s : sites) out.push_back(to_finding(index, s));
  }

  struct Finding_input {
    bool hit = false;
    bool implicit = false;
    TensorMeta tensor;        // the strided tensor (the input, or what the copy read)
    uint32_t maker = kNone;   // the view op that made it strided
    uint32_t copy_op = kNone; // implicit: the copy PyTorch made inside the call
    int64_t copy_ns = 0;
  };

  // Calls fn(op, input index, what was found) for every strided input of a compute op, in
  // trace order.
  template <class Fn>
  static void scan(const Trace& t, const TraceIndex& index, Fn&& fn) {
    // Tensor id -> index of the op that last produced it, in trace order.
    TensorProducers producer;
    for (uint32_t i = 0; i < t.ops.size(); ++i) {
      const Op& op = t.ops[i];
      // F.scaled_dot_product_attention is judged by the layout it receives (the capture's
      // python_api event), whichever CPU kernel ran under it: torch_npu makes strided q/k/v
      // dense before its fused kernel, also where this CPU's flash kernel read them as they were.
      bool sdpa = op.kind == OpKind::Api && t.str(op.name) == "torch.nn.functional.scaled_dot_product_attention";
      if ((op.kind != OpKind::Aten && !sdpa) || index.inside_composite(i)) continue;
      Family fam = sdpa ? Family::Strict : family_of(aten_base(t.str(op.name)));
      if (fam != Family::None) {
        auto in = t.inputs(op);
        for (size_t k = 0; k < in.size(); ++k) {
          const TensorMeta& m = t.tensors[in[k]];
          if (!m.is_tensor || !m.has_shape || !m.has_strides) continue;
          Finding_input found = examine(t, index, producer, i, m, fam);
          if (found.hit) fn(i, k, found);
        }
      }
      producer.record(t, i);
    }
  }

 private:



  // The op that made `m` strided: walking back through views (and through ops such as
  // add/mul that keep a strided input's layout), the nearest permute-like op, else the
  // earliest op reached.
  static uint32_t find_maker(const Trace& t, const TensorProducers& producer,
                             const TensorMeta& m) {
    uint32_t p = producer.of(m);
    uint32_t earliest = kNone;
    for (int guard = 0; p != kNone && guard < 64; ++guard) {
      std::string_view base = aten_base(t.str(t.ops[p].name));
      if (is_permute_like(base)) return p;
      earliest = p;
      const TensorMeta* next = nullptr;
      if (is_view_op(base)) {
        next = first_input(t, p);
      } else {
        // Layout kept from a strided input of the same shape (TensorIterator does that).
        auto outs = t.outputs(t.ops[p]);
        if (outs.empty()) break;
        auto out_shape = t.shape(t.tensors[outs[0]]);
        for (uint32_t r : t.inputs(t.ops[p])) {
          const TensorMeta& in = t.tensors[r];
          auto shape = t.shape(in);
          if (in.has_strides && std::equal(shape.begin(), shape.end(), out_shape.begin(), out_shape.end()) &&
              !is_dense(shape, t.strides(in), false)) {
            next = &in;
            break;
          }
        }
      }
      if (!next || !next->has_strides || is_dense(t.shape(*next), t.strides(*next), false)) break;
      p = producer.of(*next);
    }
    return earliest;
  }

  static Finding_input examine(const Trace& t, const TraceIndex& index,
                               const TensorProducers& producer, uint32_t op,
                               const TensorMeta& m, Family fam) {
    Finding_input r;
    bool dense = is_dense(t.shape(m), t.strides(m), fam == Family::Matmul);
    if (!dense) {
      if (tensor_bytes(t, m) < (fam == Family::Elementwise ? kElementwiseMinBytes : kMinBytes)) return r;
      if (t.caps.dispatched_ops && !strided_on_npu(t, producer, m)) return r;   // CPU strides, not the NPU's
      r.hit = true;
      r.tensor = m;
      r.maker = find_maker(t, producer, m);
      return r;
    }
    if (fam != Family::Matmul) return r;
    // Implicit: dense input that a copy made from a strided tensor in this very call site.
    std::string site = index.user_location(op);
    uint32_t p = producer.of(m);
    for (int guard = 0; p != kNone && guard < 8; ++guard) {
      std::string_view base = aten_base(t.str(t.ops[p].name));
      if (is_copy_kernel(base)) {
        if (index.user_location(p) != site) return r;
        auto in = t.inputs(t.ops[p]);
        size_t which = base == "copy_" ? 1 : 0;
        if (which >= in.size()) return r;
        const TensorMeta& src = t.tensors[in[which]];
        if (!src.has_strides || is_dense(t.shape(src), t.strides(src), false)) return r;
        r.hit = true;
        r.implicit = true;
        r.tensor = src;
        r.maker = find_maker(t, producer, src);
        r.copy_op = p;
        r.copy_ns = t.ops[p].dur_ns;
        return r;
      }
      if (!is_regroup_view(base)) return r;
      const TensorMeta* src = first_input(t, p);
      if (!src) return r;
      p = producer.of(*src);
    }
    return r;
  }

  static Finding to_finding(const TraceIndex& index, const InputSite& s) {
    Finding f;
    f.rule = "CONTIG002";
    f.location = s.location;
    double per_step = index.per_step(s.in_steps, s.in_first_step, s.count);
    double per_call_bytes = double(s.total_bytes) / double(s.count ? s.count : 1);
    f.cost_ns = saturating_ns(cost::copies_ns(double(s.count), double(s.total_bytes)));
    int64_t per_step_bytes = int64_t(per_step * per_call_bytes);
    f.severity = per_step_bytes >= (int64_t(1) << 20) ? Severity::Warning : Severity::Info;
    std::string place = where(s.location);
    std::string from = s.maker.empty() ? "" : fmt::format(", made strided by {}{}", s.maker,
                                                          s.maker_where.empty() ? "" : " at " + s.maker_where);
    std::string rate = per_step_note(index, s.in_steps, s.in_first_step);
    std::string which;
    for (size_t k : s.inputs) which += fmt::format("{}#{}", which.empty() ? "" : " and ", k);
    f.message = fmt::format("{}{} is fed a non-contiguous input {} (shape {}, strides {}){}: {} call{}{}, {} copied per call{}",
                            s.op, place == s.op ? "" : " at " + place, which, s.shape, s.strides, from, s.count,
                            s.count == 1 ? "" : "s", rate, format_bytes(per_call_bytes),
                            s.implicit ? " (PyTorch copies it inside the call)" : "");
    f.metrics = {{"count", double(s.count)},
                 {"per_step", per_step},
                 {"bytes", per_call_bytes},
                 {"bytes_per_step", double(per_step_bytes)},
                 {"input", double(s.inputs.empty() ? 0 : s.inputs[0])}};
    if (s.copy_ns) f.metrics.push_back({"copy_time_ns", double(s.copy_ns)});
    if (!s.maker_where.empty()) f.notes.push_back(advice("CONTIG002", "maker_note", {{"maker", s.maker}, {"where", s.maker_where}}));
    if (s.other_ops) f.notes.push_back(advice("CONTIG002", "other_ops_note"));
    f.notes.push_back(advice("CONTIG002", "cost_note"));
    if (s.channels_last) {
      f.fix = advice("CONTIG", "channels_last_fix");
      return f;
    }
    f.fix =
        advice("CONTIG002", "fix");
    return f;
  }
};

}  // namespace

const Rule& contig002_rule() {
  static const NonContiguousInput rule;
  return rule;
}

BackwardUse backward_use(const Trace& t, const Op& op) {
  if (!op.backward) return BackwardUse::Own;
  std::string_view forward = t.str(op.forward_op);
  return forward.empty() || forward == "AccumulateGrad" ? BackwardUse::Skip : BackwardUse::JoinForward;
}

std::vector<uint8_t> copies_inside_matmul_calls(const Trace& t, const TraceIndex& index) {
  std::vector<uint8_t> copies;
  // An implicit copy is found through recorded outputs (captures); CONTIG001 runs on every
  // profile, so skip the scan where there are none.
  if (std::none_of(t.ops.begin(), t.ops.end(), [](const Op& op) { return op.outputs_count > 0; })) return copies;
  NonContiguousInput::scan(t, index, [&](uint32_t, size_t, const NonContiguousInput::Finding_input& found) {
    if (!found.implicit || found.copy_op == kNone) return;
    if (copies.empty()) copies.resize(t.ops.size());
    copies[found.copy_op] = 1;
  });
  return copies;
}

}  // namespace npud
