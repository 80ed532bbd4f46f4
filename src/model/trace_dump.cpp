#include "model/trace_dump.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace npud {
namespace {

constexpr std::string_view kOpKinds[] = {"aten", "annotation", "python", "python_sync", "api", "placement",
                                         "optimizer_step", "other"};
constexpr std::string_view kTaskKinds[] = {"kernel", "ai_cpu", "memcpy", "memset", "sync", "communication", "other"};
constexpr std::string_view kCopyDirs[] = {"", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "other"};
constexpr std::string_view kRuntimeKinds[] = {"launch", "memcpy", "sync", "malloc", "other"};
constexpr std::string_view kRuntimeApis[] = {"other", "cuda", "cuda_driver", "hip", "acl"};
constexpr std::string_view kAmpApis[] = {"scale", "unscale", "step", "update", "autocast", "other"};

template <size_t N>
std::string_view name_of(const std::string_view (&names)[N], size_t v) {
  return v < N ? names[v] : "?";
}

// Values that mean "not recorded" print as "-", so a dump reads the same whatever sentinel the
// model uses.
std::string num(int64_t v) { return v == kUnset ? "-" : fmt::format("{}", v); }
std::string idx(uint32_t v) { return v == kNone ? "-" : fmt::format("{}", v); }
std::string real(double v) { return std::isnan(v) ? "nan" : fmt::format("{:.6g}", v); }
std::string text(std::string_view s) { return s.empty() ? "\"\"" : fmt::format("{:?}", s); }

uint64_t fnv1a(uint64_t h, std::string_view s) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return (h ^ '\n') * 1099511628211ull;
}

// One table: its count, a digest of all rows, its first `shown` rows.
template <class Row>
void table(std::ostream& os, std::string_view name, size_t count, size_t shown, Row row) {
  uint64_t h = 14695981039346656037ull;
  std::string first;
  for (size_t i = 0; i < count; ++i) {
    std::string r = row(i);
    h = fnv1a(h, r);
    if (i < shown) first += fmt::format("  {}: {}\n", i, r);
  }
  os << fmt::format("{}: {} rows, digest {:016x}\n{}", name, count, h, first);
  if (count > shown) os << fmt::format("  ... {} more\n", count - shown);
}

std::string stack_text(const Trace& t, uint32_t stack) {
  if (stack == kNone) return "-";
  std::string s;
  for (uint32_t f : t.frames_of(stack)) {
    const Frame& fr = t.frames[f];
    s += fmt::format("{}{}:{}({}){}", s.empty() ? "" : " < ", t.str(fr.file), fr.line, t.str(fr.function),
                     fr.enclosing ? "[enclosing]" : "");
  }
  return s;
}

std::string dims_text(std::span<const int64_t> d) {
  std::string s = "(";
  for (size_t i = 0; i < d.size(); ++i) s += fmt::format("{}{}", i ? "," : "", d[i]);
  return s + ")";
}

std::string tensor_text(const Trace& t, uint32_t ref) {
  const TensorMeta& m = t.tensors[ref];
  if (!m.is_tensor) return fmt::format("{}[not a tensor]", t.str(m.dtype));
  std::string s = fmt::format("{}", t.str(m.dtype));
  if (m.has_shape) s += dims_text(t.shape(m));
  if (m.has_strides) s += "/" + dims_text(t.strides(m));
  if (m.id != kUnset) s += fmt::format(" id={}", m.id);
  if (m.storage != kUnset) s += fmt::format(" storage={}+{}", m.storage, m.storage_offset);
  if (m.device) s += fmt::format(" on {}", t.str(m.device));
  if (m.layout) s += fmt::format(" {}", t.str(m.layout));
  if (m.requires_grad) s += " rg";
  return s;
}

std::string tensors_text(const Trace& t, std::span<const uint32_t> refs) {
  std::string s = "[";
  for (size_t i = 0; i < refs.size(); ++i) s += (i ? "; " : "") + tensor_text(t, refs[i]);
  return s + "]";
}

std::string op_row(const Trace& t, const Op& op) {
  std::string s = fmt::format("{} {} pid={} tid={} start={} dur={} self={} step={} parent={} ext={} seq={}",
                              text(t.str(op.name)), name_of(kOpKinds, size_t(op.kind)), op.pid, op.tid, op.start_ns,
                              op.dur_ns, op.self_ns, op.step_index, idx(op.parent), num(op.external_id),
                              num(op.sequence));
  if (op.backward) s += fmt::format(" backward of {}", text(t.str(op.forward_op)));
  if (op.module) s += fmt::format(" module={}", t.str(op.module));
  if (op.detail) s += fmt::format(" detail={}", text(t.str(op.detail)));
  if (op.stack != kNone) s += " at " + stack_text(t, op.stack);
  if (op.inputs_count) s += " in=" + tensors_text(t, t.inputs(op));
  if (op.outputs_count) s += " out=" + tensors_text(t, t.outputs(op));
  if (op.numeric != kNone) s += fmt::format(" numeric={}", op.numeric);
  return s;
}

std::string detail_row(const Trace& t, const KernelDetail& d) {
  return fmt::format("state={} dtypes={} type={} in={} out={} block={}/{} aic=[{} {} {} {} {}] aiv=[{} {} {} {}] "
                     "us=[{} {} {} {} {} {}]",
                     text(t.str(d.op_state)), text(t.str(d.input_dtypes)), text(t.str(d.op_type)),
                     text(t.str(d.input_shapes)), text(t.str(d.output_shapes)), d.block_dim, d.mix_block_dim,
                     real(d.aic_mac), real(d.aic_scalar), real(d.aic_mte1), real(d.aic_mte2), real(d.aic_fixpipe),
                     real(d.aiv_vec), real(d.aiv_scalar), real(d.aiv_mte2), real(d.aiv_mte3), real(d.aicore_us),
                     real(d.aiv_us), real(d.aic_mte2_us), real(d.aiv_mte2_us), real(d.aic_fixpipe_us),
                     real(d.aiv_mte3_us));
}

std::string kernel_row(const Trace& t, const Kernel& k) {
  std::string s = fmt::format("{} {} {} type={} device={} stream={} start={} dur={} step={} corr={} ext={} bytes={}",
                              text(t.str(k.name)), name_of(kTaskKinds, size_t(k.kind)),
                              name_of(kCopyDirs, size_t(k.copy)), text(t.str(k.task_type)), k.device, k.stream,
                              k.start_ns, k.dur_ns, k.step_index, num(k.correlation), num(k.external_id),
                              num(k.bytes));
  if (k.group) s += fmt::format(" group={}", text(t.str(k.group)));
  if (k.detail != kNone) s += " detail: " + detail_row(t, t.kernel_details[k.detail]);
  return s;
}

void header(std::ostream& os, const Trace& t) {
  const TraceCaps& c = t.caps;
  os << fmt::format("format: {}\n", to_string(t.format));
  os << fmt::format("caps: dispatched_ops={} estimated_costs={} startup_step={} runtime_calls={} npu_tasks={} "
                    "end_status={} program_argv={}\n",
                    c.dispatched_ops, c.estimated_costs, c.startup_step, c.runtime_calls, c.npu_tasks, c.end_status,
                    c.program_argv);
  os << fmt::format("time_origin_ns: {}\nspan_ns: {}\n", t.time_origin_ns, t.span_ns());
  os << "env:\n";
  for (const auto& [k, v] : t.env) os << fmt::format("  {}={}\n", k, text(v));
  os << fmt::format("warnings: {}\n", t.warnings.size());
  for (const Warning& w : t.warnings) os << fmt::format("  at byte {}: {}\n", w.offset, w.message);
  const CaptureStatus& cs = t.capture;
  if (c.end_status)
    os << fmt::format("capture: ended={} reason={} steps_completed={} error={} exception={} unended_step_ops={} "
                      "graphs_compiled={} graph_breaks={}\n",
                      cs.ended, text(cs.reason), cs.steps_completed, text(cs.error), text(cs.exception),
                      cs.unended_step_ops, cs.graphs_compiled, cs.graph_breaks.size());
}

}  // namespace

void dump_trace(std::ostream& os, const Trace& t, size_t rows) {
  header(os, t);
  table(os, "steps", t.steps.size(), rows, [&](size_t i) {
    const Step& s = t.steps[i];
    return fmt::format("number={} start={} dur={}", s.number, s.start_ns, s.dur_ns);
  });
  table(os, "ops", t.ops.size(), rows, [&](size_t i) { return op_row(t, t.ops[i]); });
  table(os, "kernels", t.kernels.size(), rows, [&](size_t i) { return kernel_row(t, t.kernels[i]); });
  table(os, "runtime", t.runtime.size(), rows, [&](size_t i) {
    const RuntimeCall& r = t.runtime[i];
    return fmt::format("{} {} {} pid={} tid={} start={} dur={} step={} corr={} ext={}", text(t.str(r.name)),
                       name_of(kRuntimeKinds, size_t(r.kind)), name_of(kRuntimeApis, size_t(r.api)), r.pid, r.tid,
                       r.start_ns, r.dur_ns, r.step_index, num(r.correlation), num(r.external_id));
  });
  table(os, "memory", t.memory.size(), rows, [&](size_t i) {
    const MemoryEvent& m = t.memory[i];
    return fmt::format("ts={} bytes={} allocated={} reserved={} device={}", m.ts_ns, m.bytes, num(m.total_allocated),
                       num(m.total_reserved), m.device);
  });
  table(os, "comm_step_times", t.comm_step_times.size(), rows, [&](size_t i) {
    const CommStepTime& c = t.comm_step_times[i];
    return fmt::format("step={} wait={} transit={} elapse={}", c.step_number, c.wait_ns, c.transit_ns, c.elapse_ns);
  });
  table(os, "step_trace_times", t.step_trace_times.size(), rows, [&](size_t i) {
    const StepTraceTime& s = t.step_trace_times[i];
    return fmt::format("step={} computing={} comm_not_overlapped={} overlapped={} free={} stage={} bubble={}",
                       s.step_number, s.computing_ns, s.comm_not_overlapped_ns, s.overlapped_ns, s.free_ns,
                       s.stage_ns, s.bubble_ns);
  });
  table(os, "comm_ops", t.comm_ops.size(), rows, [&](size_t i) {
    const CommOp& c = t.comm_ops[i];
    std::string s = fmt::format("{} group={} p2p={} rank={} step={} start={} elapse_ms={} transit_ms={} wait_ms={}",
                                text(t.str(c.name)), text(t.str(c.group)), c.p2p, c.rank, c.step_number,
                                num(c.start_ns), real(c.elapse_ms), real(c.transit_ms), real(c.wait_ms));
    for (const CommTransport& tr : t.transports(c)) {
      s += fmt::format(" [{} {}MB {}ms {}GB/s large={} sizes:", t.str(tr.type), real(tr.size_mb), real(tr.time_ms),
                       real(tr.bandwidth_gbs), real(tr.large_packet_ratio));
      for (const CommPacketSize& p : t.packet_sizes(tr))
        s += fmt::format(" {}MBx{}={}ms", real(p.size_mb), p.count, real(p.time_ms));
      s += "]";
    }
    return s;
  });
  table(os, "comm_links", t.comm_links.size(), rows, [&](size_t i) {
    const CommLink& l = t.comm_links[i];
    return fmt::format("{} group={} step={} {}-{} {} {}MB {}ms {}GB/s", text(t.str(l.op)), text(t.str(l.group)),
                       l.step_number, l.src, l.dst, t.str(l.transport), real(l.size_mb), real(l.time_ms),
                       real(l.bandwidth_gbs));
  });
  table(os, "hccl_tasks", t.hccl_tasks.size(), rows, [&](size_t i) {
    const HcclTask& h = t.hccl_tasks[i];
    return fmt::format("{} op={} start={} dur={} bytes={} transport={} link={}", text(t.str(h.name)), idx(h.op),
                       h.start_ns, h.dur_ns, h.size_bytes, text(t.str(h.transport)), text(t.str(h.link)));
  });
  table(os, "ai_core_freq", t.ai_core_freq.size(), rows, [&](size_t i) {
    return fmt::format("ts={} mhz={}", t.ai_core_freq[i].ts_ns, real(t.ai_core_freq[i].mhz));
  });
  table(os, "numerics", t.numerics.size(), rows, [&](size_t i) {
    const OpNumeric& n = t.numerics[i];
    return fmt::format("op={} dtype={} out={} lowp={} autocast={} reference={} calls={} local={} cos={} drift={} cos={}",
                       idx(n.op), text(t.str(n.dtype)), n.out_arg, n.lowp, n.in_autocast, text(t.str(n.reference)),
                       n.calls, n.has_local, real(n.local.cos), n.has_drift, real(n.drift.cos));
  });
  table(os, "grad_histograms", t.grad_histograms.size(), rows, [&](size_t i) {
    const GradHistogram& g = t.grad_histograms[i];
    std::string s = fmt::format("ts={} step={} params={} elements={} zero={} nonfinite={} under={} over={} scaled={} "
                                "scale={} log2_min={} bins:",
                                g.ts_ns, g.step_number, g.params, g.elements, g.zero, g.nonfinite, g.underflow_fp16,
                                g.overflow_fp16, g.scaled, real(g.loss_scale), g.log2_min);
    for (int64_t b : t.bins(g)) s += fmt::format(" {}", b);
    return s;
  });
  table(os, "amp_calls", t.amp_calls.size(), rows, [&](size_t i) {
    const AmpCall& a = t.amp_calls[i];
    return fmt::format("{} {} ts={} step={} scale={} dtype={} at {}", text(t.str(a.name)),
                       name_of(kAmpApis, size_t(a.kind)), a.ts_ns, a.step_number, real(a.scale), text(t.str(a.dtype)),
                       stack_text(t, a.stack));
  });
  table(os, "op_dispatch", t.op_dispatch.size(), rows, [&](size_t i) {
    const OpDispatch& d = t.op_dispatch[i];
    return fmt::format("{} kind={} cpu_kernel={} expanded={}", text(t.str(d.op)), d.kind ? std::string(1, d.kind) : "-",
                       d.cpu_kernel, d.expanded);
  });
  table(os, "graph_breaks", t.capture.graph_breaks.size(), rows, [&](size_t i) {
    const GraphBreak& g = t.capture.graph_breaks[i];
    return fmt::format("{}:{} reason={} count={} step={}", g.file, g.line, text(g.reason), g.count, g.step);
  });
  table(os, "recompiles", t.capture.recompiles.size(), rows, [&](size_t i) {
    const Recompile& r = t.capture.recompiles[i];
    std::string s = fmt::format("{}:{} {} reason={} count={} step={}", r.file, r.line, r.function, text(r.reason),
                                r.count, r.step);
    for (const std::string& other : r.other_reasons) s += " also=" + text(other);
    return s;
  });
}

}  // namespace npud
