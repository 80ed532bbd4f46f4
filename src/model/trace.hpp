// The one event model every importer fills and every analysis reads.
// Analyses never look at raw formats (Kineto JSON, torch_npu CSV, capture files):
// they only see a Trace. Strings are interned and variable-length data (tensor
// refs, dims, stack frames) lives in flat pools, so a trace of millions of events
// stays compact: memory is a fraction of the input's size.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/dtype.hpp"
#include "model/string_pool.hpp"
#include "model/tensor_metrics.hpp"

namespace npud {

inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
inline constexpr int64_t kUnset = -1;

enum class InputFormat : uint8_t {
  Unknown,
  KinetoJson,      // torch.profiler / Chrome trace JSON (object or array form)
  AscendDir,       // torch_npu profiler output (*_ascend_pt or ASCEND_PROFILER_OUTPUT)
  AscendCsv,       // a lone kernel_details.csv
  Capture,         // npu-doctor's own capture file (Chrome JSON + extra args)
};
std::string_view to_string(InputFormat f);

// What ran on the host: aten ops, record_function annotations, python functions,
// and (from captures) Python-level sync calls.
enum class OpKind : uint8_t {
  Aten,            // cpu_op / aten dispatch
  Annotation,      // user_annotation, record_function ranges (not ProfilerStep)
  Python,          // python_function events (with_stack=True)
  PythonSync,      // capture: Tensor.item()/.cpu()/... seen at Python level
  Api,             // capture: a torch API call whose implementation torch_npu replaces
                   // (F.scaled_dot_product_attention): the ops inside it are CPU/CUDA's, not NPU's
  Placement,       // capture: a `.to(device)` that moves a tensor to the device (`placement` events)
  OptimizerStep,   // capture: an optimizer.step() begins (`optimizer_config`: class and settings)
  Other,
};

struct Op {
  StrId name = 0;            // e.g. "aten::add_" or "aten::add.Tensor" (captures keep overloads)
  OpKind kind = OpKind::Other;
  // Run by autograd's backward pass (captures: `bwd`). Its `stack` and `module` are then those
  // of the forward op that made it, and `forward_op` holds that op's name ("AccumulateGrad"
  // for writes into .grad; 0 when not known, torch 1.x: then `stack` is the backward() line).
  bool backward = false;
  int32_t pid = 0;
  int32_t tid = 0;
  int64_t start_ns = 0;      // relative to Trace::time_origin_ns
  int64_t dur_ns = 0;
  int32_t step_index = -1;   // index into Trace::steps, -1 = outside any step
  uint32_t numeric = kNone;  // amp-check: index into Trace::numerics (fills padding: no size cost)
  int64_t external_id = kUnset;   // Kineto "External id": links to runtime calls and kernels
  int64_t sequence = kUnset;      // autograd sequence number / capture sequence
  uint32_t inputs_begin = 0;      // [begin, begin+count) into Trace::tensor_refs
  uint32_t inputs_count = 0;
  uint32_t outputs_begin = 0;
  uint32_t outputs_count = 0;
  uint32_t stack = kNone;         // index into Trace::stacks
  StrId module = 0;               // module path, e.g. "model.blocks.0.attn"
  StrId detail = 0;               // free text from the source (capture: sync reason, string args)
  StrId forward_op = 0;           // backward ops: see `backward`
  uint32_t parent = kNone;        // enclosing op on the same thread (set by finalize())
  int64_t self_ns = 0;            // dur minus children's dur (set by finalize())
};

// Work the device ran: kernels, copies, memsets, sync records, NPU tasks.
enum class TaskKind : uint8_t {
  Kernel,          // CUDA/HIP kernel, NPU AI_CORE / AI_VECTOR / MIX task
  AiCpu,           // NPU AI_CPU task: the op runs on the device's CPU cores (slow path)
  Memcpy,
  Memset,
  Sync,            // Kineto cuda_sync records (what the device waited for)
  Communication,   // NCCL / HCCL kernels
  Other,
};

enum class CopyDir : uint8_t { None, HtoD, DtoH, DtoD, HtoH, PtoP, Other };

struct Kernel {
  StrId name = 0;
  TaskKind kind = TaskKind::Kernel;
  CopyDir copy = CopyDir::None;
  StrId task_type = 0;       // raw type as the source spells it: "AI_CPU", "kernel", "gpu_memcpy"
  int32_t device = -1;
  int32_t stream = -1;
  // A collective's process group as the trace records it ("0 [0, 1]": Kineto's Process Group
  // Name and Ranks); 0: not recorded. Collectives match across ranks within their group.
  StrId group = 0;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  int64_t correlation = kUnset;   // links to RuntimeCall::correlation
  int64_t external_id = kUnset;   // links to Op::external_id
  int64_t bytes = kUnset;
  int32_t step_index = -1;   // as Op::step_index
  uint32_t detail = kNone;        // index into Trace::kernel_details (torch_npu kernel_details.csv)
};

// What torch_npu's kernel_details.csv adds to a device task: its op state, launch geometry,
// input dtypes and, with aic_metrics, the PMU pipeline ratios (busy share of each unit;
// NaN when the column is absent). Older CANN splits mac and vec ratios by dtype: summed.
struct KernelDetail {
  StrId op_state = 0;             // "static" | "dynamic" | 0 (no OP State column)
  StrId input_dtypes = 0;         // "DT_BF16;INT64" as written
  // The op type and tensor shapes as written ("MatMulV3"; "8192,15365;8192,4096", quotes
  // stripped; ';' between tensors, empty between ';' for absent ones): SHAPE001/SHAPE002/FUSE010.
  StrId op_type = 0, input_shapes = 0, output_shapes = 0;
  int32_t block_dim = -1, mix_block_dim = -1;
  float aic_mac = NAN, aic_scalar = NAN, aic_mte1 = NAN, aic_mte2 = NAN, aic_fixpipe = NAN;
  float aiv_vec = NAN, aiv_scalar = NAN, aiv_mte2 = NAN, aiv_mte3 = NAN;
  // Busy microseconds (PipeUtilization *_time(us) columns; NaN when absent): the AI Core's time
  // and the data-movement pipes' (FUSE010 sums them over operator sequences as the advisor does).
  float aicore_us = NAN, aiv_us = NAN, aic_mte2_us = NAN, aiv_mte2_us = NAN, aic_fixpipe_us = NAN, aiv_mte3_us = NAN;
};

// Host calls into the device runtime: cudaLaunchKernel, cudaMemcpyAsync,
// cudaStreamSynchronize, aclrtSynchronizeStream, hipMemcpy...
enum class RuntimeKind : uint8_t { Launch, Memcpy, Sync, Malloc, Other };

// Whose runtime API a call is, as its reader tells (by torch_npu's vendor prefix or the name's).
enum class RuntimeApi : uint8_t {
  Other,
  Cuda,         // the CUDA runtime: cuda*
  CudaDriver,   // the CUDA driver: cuStreamSynchronize, cuLaunchKernel...
  Hip,          // ROCm's HIP: hip*
  Acl,          // AscendCL: acl* (torch_npu writes "AscendCL@aclrtMalloc")
};

struct RuntimeCall {
  StrId name = 0;            // the API name, no vendor prefix: "aclrtMalloc", "cudaMemcpyAsync"
  RuntimeKind kind = RuntimeKind::Other;
  RuntimeApi api = RuntimeApi::Other;
  int32_t pid = 0;
  int32_t tid = 0;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  int64_t correlation = kUnset;
  int64_t external_id = kUnset;
  int32_t step_index = -1;   // as Op::step_index
};

// A training step: ProfilerStep#N ranges, capture step markers, Ascend "Step Id".
struct Step {
  int64_t number = 0;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
};

struct Frame {
  StrId file = 0;
  int32_t line = 0;
  StrId function = 0;
  // The line is where this frame was when the trace began, not where the op was called: a
  // Kineto python_function event of a script's running `<module>` (rules/rule_support.hpp).
  bool enclosing = false;
};

struct Stack {
  uint32_t frames_begin = 0;     // into Trace::stack_frames, innermost (user's) frame first
  uint32_t frames_count = 0;
};

// Tensor metadata, as far as the source records it. Kineto records dims/types/strides
// per input; captures add ids, storage identity and outputs.
struct TensorMeta {
  int64_t id = kUnset;           // capture: unique tensor id
  int64_t storage = kUnset;      // capture: storage identity (aliasing)
  StrId dtype = 0;               // as recorded: "float32", "c10::Half", "Scalar", ... ("" = unknown)
  StrId device = 0;
  StrId layout = 0;              // capture: "sparse_coo", "sparse_csr"...; "" = strided
  int64_t storage_offset = 0;
  uint32_t dims_begin = 0;       // shape at dims[begin, begin+rank); strides follow if has_strides
  uint8_t rank = 0;
  bool has_shape = false;
  bool has_strides = false;
  bool is_tensor = true;         // false for scalars/None/lists that the source lists as inputs
  bool requires_grad = false;    // capture: an op input that requires grad (`rg`)
  DType scalar_type = DType::Unknown;  // dtype, canonicalised by the reader (parse_dtype)
};

// Collective communication time of one step as msprof measured it (communication.json of a
// torch_npu profile): wait is the part spent waiting for other ranks.
struct CommStepTime {
  int64_t step_number = -1;      // -1: not numbered (the profile's only step)
  int64_t wait_ns = 0, transit_ns = 0, elapse_ns = 0;
};

// One row of a torch_npu step_trace_time.csv: the profiler's own per-step breakdown, read as a
// rank's step table when the profile has no trace_view.json (docs/cluster.md).
struct StepTraceTime {
  int64_t step_number = -1;      // -1: not numbered
  int64_t computing_ns = 0, comm_not_overlapped_ns = 0, overlapped_ns = 0, free_ns = 0;
  int64_t stage_ns = -1, bubble_ns = -1;  // -1: no such column
};

// --- HCCL communication (docs/communication.md) ------------------------------------------

// One transport of a collective as msprof measured it (communication.json "Communication
// Bandwidth Info": "SDMA", "RDMA", "HCCS", "PCIE"...): bytes moved, transfer time, and the
// distribution of its packet sizes.
struct CommTransport {
  StrId type = 0;                 // "SDMA", "RDMA", "HCCS", "PCIE", "SIO", ...
  double size_mb = 0, time_ms = 0, bandwidth_gbs = 0, large_packet_ratio = 0;
  uint32_t sizes_begin = 0, sizes_count = 0;   // into Trace::comm_packet_sizes
};

// "Size Distribution": `count` packets of `size_mb` took `time_ms` together.
struct CommPacketSize {
  double size_mb = 0, time_ms = 0;
  int64_t count = 0;
};

// One collective / point-to-point op of communication.json (per rank) or of msprof-analyze's
// cluster_communication.json (one record per rank of the op). "Total Op Info" is not an op.
struct CommOp {
  StrId name = 0;                 // "hcom_allReduce__123_0" (the key before '@')
  StrId group = 0;                // the group hash after '@'; cluster: the rank set "(0, 1)"
  bool p2p = false;               // under "p2p" (send/receive) rather than "collective"
  int32_t rank = -1;              // cluster_communication.json: the rank; -1: this trace's own
  int64_t step_number = -1;       // -1: not numbered
  int64_t start_ns = kUnset;      // "Start Timestamp(us)", relative to Trace::time_origin_ns
  double elapse_ms = 0, transit_ms = 0, wait_ms = 0;
  uint32_t transports_begin = 0, transports_count = 0;   // into Trace::comm_transports
};

// One src->dst link of an op in communication_matrix.json.
struct CommLink {
  StrId op = 0, group = 0;        // as in CommOp ("Total Op Info"-style summary keys skipped)
  int64_t step_number = -1;
  int32_t src = -1, dst = -1;     // ranks ("{src}-{dst}")
  StrId transport = 0;            // "LOCAL", "HCCS", "PCIE", "RDMA", "SDMA"
  double size_mb = 0, time_ms = 0, bandwidth_gbs = 0;
};

// A task of the HCCL timeline in trace_view.json (process "HCCL" or "Communication"): an op
// (`hcom_*`, op == kNone) or one of its Memcpy / Reduce_Inline tasks with transport, link
// type and size (`args`). op: index of the op task it belongs to.
struct HcclTask {
  StrId name = 0;
  uint32_t op = kNone;
  int64_t start_ns = 0, dur_ns = 0;
  int64_t size_bytes = -1;        // "size(Byte)"; -1: not recorded
  StrId transport = 0, link = 0;  // "transport type" ("SDMA", "RDMA", "LOCAL"), "link type" ("HCCS", "ON_CHIP")
};

// One "AI Core Freq" counter sample of a torch_npu trace_view.json: the AI Cores run at `mhz`
// from ts_ns until the next sample (FREQ001).
struct FreqSample {
  int64_t ts_ns = 0;
  float mhz = 0;
};

struct MemoryEvent {
  int64_t ts_ns = 0;
  int64_t bytes = 0;             // positive = allocation, negative = free
  int64_t total_allocated = kUnset;
  int64_t total_reserved = kUnset;
  int32_t device = -1;
};

// --- amp-check records (docs/formats/amp.md) ---------------------------------------------

// args.numeric of one aten op.
struct OpNumeric {
  uint32_t op = kNone;        // index into Trace::ops (kept right by finalize())
  StrId dtype = 0;            // precision the op ran in: "float16", "bfloat16", "float32"
  int32_t out_arg = 0;        // which output was measured
  bool lowp = false;          // ran in low precision
  bool in_autocast = false;   // ran inside the program's own autocast region (`autocast`)
  bool has_local = false, has_drift = false;
  // How the shim made the fp32 reference when not by running the op itself: "math" for fused
  // attention kernels (softmax(q·kᵀ)·v in fp32, _amp_attention.py); 0 otherwise.
  StrId reference = 0;
  // Calls of this op at this line and module the record stands for (`calls`): amp-check
  // measures a site's calls 1-4 and each power of two of a step, each record counting the
  // unmeasured calls since the site's previous one.
  uint32_t calls = 1;
  TensorMetrics local;       // error this op adds on its own (fed exact inputs)
  TensorMetrics drift;       // accumulated error up to and including this op
};

// One "grad_histogram" event: gradient magnitudes at an optimizer.step().
struct GradHistogram {
  int64_t ts_ns = 0;
  int64_t step_number = -1;   // as recorded (Step::number)
  int64_t params = 0, elements = 0, zero = 0, nonfinite = 0, underflow_fp16 = 0, overflow_fp16 = 0;
  int32_t log2_min = -40;     // bucket k counts floor(log2|g|) == log2_min + k
  uint32_t bins_begin = 0, bins_count = 0;   // into Trace::grad_bins
  bool scaled = false;        // gradients were divided by loss_scale before counting
  double loss_scale = std::numeric_limits<double>::quiet_NaN();
};

enum class AmpApi : uint8_t { Scale, Unscale, Step, Update, Autocast, Other };

// A recorded GradScaler / autocast call ("amp_api" events).
struct AmpCall {
  StrId name = 0;             // "GradScaler.scale", "torch.autocast", ...
  AmpApi kind = AmpApi::Other;
  int64_t ts_ns = 0;
  int64_t step_number = -1;   // as recorded (Step::number)
  uint32_t stack = kNone;     // index into Trace::stacks
  double scale = std::numeric_limits<double>::quiet_NaN();
  StrId dtype = 0;            // autocast: the dtype argument when recorded
};
AmpApi classify_amp_call(std::string_view name);

// The running torch's dispatch facts of one op, as the capture shim recorded them once per op
// name (`npu_doctor_op` events, docs/formats/capture.md): FALLBACK002 judges by them.
struct OpDispatch {
  StrId op = 0;             // "aten::_foreach_mul_.Tensor"
  char kind = 0;            // 'E', 'N' or 'B' (knowledge/dispatch_facts.hpp)
  bool cpu_kernel = false;  // the op has a CPU kernel of its own
  bool expanded = false;    // its composite kernel ran under the capture: its inner ops are recorded
};

// How a capture ended (docs/formats/capture.md "End"): every report says first when it is not
// complete. Default: not a capture, nothing to say.
// A place where torch.compile's dynamo broke a graph, as the capture's `npu_doctor_compile`
// event records it (docs/formats/capture.md): the program's file:line, dynamo's reason (its
// graph-break type), explanation and first hint, how often dynamo logged it (once per compile)
// and the step it was first logged in.
struct GraphBreak {
  std::string file, reason, explanation, hint;
  int line = 0;
  int64_t count = 0, step = -1;
};

// A function torch.compile's dynamo compiled again because the guards of its compiled code
// failed, as the capture's `npu_doctor_compile` event records it: the function's file:line (where
// it is defined), its name ("forward", or dynamo's "torch_dynamo_resume_in_forward_at_31" for
// the code after a graph break), the first guard failure ("tensor 'x' size mismatch at index
// 0. expected 4, actual 5") and up to two other ones of later recompiles ("self.calls == 1"),
// how often and from which step.
struct Recompile {
  std::string file, function, reason;
  std::vector<std::string> other_reasons;
  int line = 0;
  int64_t count = 0, step = -1;
};

struct CaptureStatus {
  bool ended = false;           // an `npu_doctor_end` event was read
  std::string reason;           // its reason: "done", "stopped", "exit", "error", "exception"
  int64_t steps_completed = -1;
  std::string error;            // the shim's internal error (`npu_doctor_error`), "" if none
  std::string error_op;         // the op being recorded when it failed, "" if none or unknown
  std::string error_thread;     // the thread it failed on
  std::string error_where;      // the shim's own file:line that raised
  std::string exception;        // the program's uncaught exception (reason "exception"), if any
  // Ops recorded in a step whose end never came (no ProfilerStep: killed in it, or the tail
  // after the last step end): they belong to no Step. unended_step: the last such step number.
  size_t unended_step_ops = 0;
  int64_t unended_step = -1;
  // torch.compile: graph breaks, and graphs compiled in all / during the recorded steps (-1:
  // the capture says nothing, torch.compile never ran or the shim predates it).
  std::vector<GraphBreak> graph_breaks;
  std::vector<Recompile> recompiles;
  int64_t graphs_compiled = -1, graphs_in_steps = -1;
};

// What a trace's source records, beyond the events themselves. Its reader (src/ingest) sets
// these and nothing else does: analyses, rules and reports test a flag, never the input format
// (docs/design.md "Event model"). Each says what a rule may rely on when it is true.
struct TraceCaps {
  // Ops are every aten op the program dispatched, with overload names ("aten::mode" is the
  // default overload), nested as dispatched (a composite's inner ops are its children), with
  // input and output tensors (ids, storages, devices) and their argument text (`detail`).
  bool dispatched_ops = false;
  // Times are those of the machine that recorded the program (often a CPU, no NPU at all), not
  // the target device's: rules estimate a finding's NPU cost (docs/cost-model.md), reports say so.
  bool estimated_costs = false;
  // Step number 0 spans the program's start-up (imports, model build) up to the first step's
  // end: per-step rates and the mean step leave it out when later steps exist.
  bool startup_step = false;
  // Host runtime calls (cudaMemcpyAsync, aclrtSynchronizeStream...) are recorded when they ran
  // (CUDA and HIP ones on the thread that made them, torch_npu's on its task-queue thread).
  bool runtime_calls = false;
  // Device tasks are an Ascend NPU's, whatever their task types say (torch_npu's profiler).
  bool npu_tasks = false;
  // Trace::capture says how the recording ended (whether it stopped early, and why).
  bool end_status = false;
  // env "argv" and "cwd" name the program that ran: its own source file can be read.
  bool program_argv = false;
};

// A non-fatal problem an importer met (skipped event, unknown unit...).
struct Warning {
  std::string message;
  uint64_t offset = 0;           // byte offset into the (decompressed) input, 0 = none
};

class Trace {
 public:
  StringPool strings;

  std::vector<Op> ops;
  std::vector<Kernel> kernels;
  std::vector<RuntimeCall> runtime;
  std::vector<Step> steps;
  std::vector<MemoryEvent> memory;
  std::vector<KernelDetail> kernel_details;   // Kernel::detail points here
  std::vector<CommStepTime> comm_step_times;  // torch_npu communication.json, by step
  std::vector<StepTraceTime> step_trace_times;  // step_trace_time.csv rows, without a trace_view.json only
  // HCCL detail (docs/communication.md): communication.json's ops and bandwidth, the matrix's
  // links, trace_view's HCCL tasks.
  std::vector<CommOp> comm_ops;
  std::vector<CommTransport> comm_transports;   // CommOp::transports_* point here
  std::vector<CommPacketSize> comm_packet_sizes;  // CommTransport::sizes_* point here
  std::vector<CommLink> comm_links;
  std::vector<HcclTask> hccl_tasks;             // in time order
  std::vector<FreqSample> ai_core_freq;         // trace_view "AI Core Freq" counters, in file order

  std::vector<TensorMeta> tensors;
  std::vector<uint32_t> tensor_refs;   // Op inputs/outputs point here; entries index tensors
  std::vector<int64_t> dims;           // shapes and strides of tensors
  std::vector<Frame> frames;
  std::vector<uint32_t> stack_frames;  // Stack entries point here; entries index frames
  std::vector<Stack> stacks;

  // amp-check (docs/formats/amp.md); empty for every other trace.
  std::vector<OpNumeric> numerics;      // Op::numeric points here
  std::vector<GradHistogram> grad_histograms;
  std::vector<int64_t> grad_bins;       // GradHistogram bins
  std::vector<AmpCall> amp_calls;       // sorted by time by finalize()

  // Captures only (docs/formats/capture.md).
  std::vector<OpDispatch> op_dispatch;  // one per op name the shim saw
  CaptureStatus capture;

  // Facts about where the trace came from: "torch", "torch_npu", "python", "device",
  // "rank", "world_size", "device_name", "base_time_ns"... in insertion order.
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<Warning> warnings;

  std::string source;                  // path the trace was read from
  InputFormat format = InputFormat::Unknown;   // the input's kind, as reports name it
  TraceCaps caps;                      // what the source records (set by its reader)
  int64_t time_origin_ns = 0;          // absolute time of start_ns == 0 (informational)
  uint64_t input_bytes = 0;            // uncompressed bytes read

  // --- building ---
  StrId intern(std::string_view s) { return strings.intern(s); }
  uint32_t add_tensor(const TensorMeta& t) { tensors.push_back(t); return uint32_t(tensors.size() - 1); }
  uint32_t add_frame(std::string_view file, int32_t line, std::string_view function);
  uint32_t add_stack(std::span<const uint32_t> frame_ids);
  void set_env(std::string_view key, std::string_view value);

  // Sorts events, assigns steps, computes parent/self time. Importers call it once at the end.
  void finalize();

  // --- reading ---
  std::string_view str(StrId id) const { return strings.view(id); }
  std::span<const uint32_t> inputs(const Op& op) const {
    return {tensor_refs.data() + op.inputs_begin, op.inputs_count};
  }
  std::span<const uint32_t> outputs(const Op& op) const {
    return {tensor_refs.data() + op.outputs_begin, op.outputs_count};
  }
  std::span<const int64_t> shape(const TensorMeta& t) const {
    return t.has_shape ? std::span<const int64_t>{dims.data() + t.dims_begin, t.rank} : std::span<const int64_t>{};
  }
  std::span<const int64_t> strides(const TensorMeta& t) const {
    return t.has_strides ? std::span<const int64_t>{dims.data() + t.dims_begin + t.rank, t.rank}
                         : std::span<const int64_t>{};
  }
  std::span<const uint32_t> frames_of(uint32_t stack) const;
  // The first frame of an op's stack (the user's file:line), or nullptr.
  const Frame* user_frame(const Op& op) const;
  std::string_view env_value(std::string_view key) const;
  // amp-check records of any kind (numerics, gradient histograms, GradScaler/autocast calls).
  bool has_amp() const { return !numerics.empty() || !grad_histograms.empty() || !amp_calls.empty(); }
  const OpNumeric* numeric_of(const Op& op) const { return op.numeric < numerics.size() ? &numerics[op.numeric] : nullptr; }
  std::span<const CommTransport> transports(const CommOp& op) const {
    return {comm_transports.data() + op.transports_begin, op.transports_count};
  }
  std::span<const CommPacketSize> packet_sizes(const CommTransport& tr) const {
    return {comm_packet_sizes.data() + tr.sizes_begin, tr.sizes_count};
  }
  // The op's transport of this type ("SDMA", "RDMA"), or nullptr.
  const CommTransport* transport(const CommOp& op, std::string_view type) const;
  std::span<const int64_t> bins(const GradHistogram& g) const { return {grad_bins.data() + g.bins_begin, g.bins_count}; }

  // Step 0 holds the start-up (caps.startup_step) and later steps exist: per-step rates and
  // the mean step leave it out.
  bool startup_step_left_out() const { return caps.startup_step && steps.size() >= 2 && steps.front().number == 0; }

  // Which step (index into steps) contains this timestamp, or -1.
  int32_t step_at(int64_t ts_ns) const;
  int64_t span_ns() const;   // first event start to last event end
};

// Shape helpers shared by importers and rules.
int64_t numel(std::span<const int64_t> shape);
bool is_contiguous(std::span<const int64_t> shape, std::span<const int64_t> strides);
// A 4-D tensor in channels_last (NHWC) memory format and not row-major: the layout CUDA's
// tensor cores prefer, converted (TransData) before every Ascend convolution.
bool is_channels_last(std::span<const int64_t> shape, std::span<const int64_t> strides);
size_t dtype_size(std::string_view dtype);   // bytes per element of a spelling, 0 if unknown
// Bytes of a tensor: elements x dtype size (4 per element when the dtype is unknown).
int64_t tensor_bytes(const Trace& t, const TensorMeta& m);

}  // namespace npud
