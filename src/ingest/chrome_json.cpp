// Chrome Trace Event JSON -> Trace. The stream splitter (json_stream) hands over one event
// at a time; parse_event (chrome_fields) decodes it with simdjson On-Demand; this file maps
// the decoded fields onto the event model.
#include "ingest/chrome_json.hpp"
#include "ingest/json_key.hpp"

#include <fmt/format.h>
#include <simdjson.h>
#include <sys/mman.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ingest/amp_fields.hpp"
#include "ingest/byte_source.hpp"
#include "ingest/chrome_fields.hpp"
#include "util/input_error.hpp"
#include "ingest/json_stream.hpp"
#include "ingest/npu_launch_links.hpp"
#include "ingest/prefetch_source.hpp"
#include "util/text.hpp"
#include "ingest/limits.hpp"

namespace npud {

namespace {

namespace od = simdjson::ondemand;
static_assert(JsonEventStream::kPadding >= simdjson::SIMDJSON_PADDING, "events must be followed by simdjson's padding");

enum class Cat : uint8_t {
  None,          // no "cat": torch_npu trace_view.json device/CANN events, decided by process
  Aten, Annotation, Python, PythonSync, Api, Placement, OptimizerStep, HostOther,
  Kernel, Memcpy, Memset, CudaSync, DeviceOther,
  Runtime,
  Instant,
  Amp,           // amp-check records: "amp_api" (GradScaler/autocast calls), "amp_grad" (histograms)
  Ignored,       // known and not needed (flows, profiler spans, GPU-side annotations, counters)
  Unknown,
};

Cat classify_cat(std::string_view c) {
  if (c == "cpu_op" || c == "operator" || c == "aten") return Cat::Aten;
  if (c == "kernel") return Cat::Kernel;
  if (c == "cuda_runtime" || c == "cuda_driver") return Cat::Runtime;
  if (c == "user_annotation") return Cat::Annotation;
  if (c == "gpu_memcpy") return Cat::Memcpy;
  if (c == "gpu_memset") return Cat::Memset;
  if (c == "cuda_sync") return Cat::CudaSync;
  if (c == "python_function") return Cat::Python;
  if (c == "python_sync") return Cat::PythonSync;
  if (c == "python_api") return Cat::Api;
  if (c == "placement") return Cat::Placement;
  if (c == "optimizer_config") return Cat::OptimizerStep;
  if (c == "cuda_api" || c == "enqueue" || c == "dequeue" ||
      c == "gc" || c == "GC")   // torch_npu's garbage-collection ranges (experimental_config gc_detect_threshold)
    return Cat::HostOther;
  if (c == "cpu_instant_event") return Cat::Instant;
  if (c == "amp_api" || c == "amp_grad") return Cat::Amp;
  // other accelerators' host runtimes: mtia_runtime, privateuse1_runtime, *_driver
  if (c.ends_with("_runtime") || c.ends_with("_driver")) return Cat::Runtime;
  if (c == "mtia_ccp_events") return Cat::DeviceOther;
  if (c == "Trace" || c == "gpu_user_annotation" || c == "cuda_profiler_range" || c == "ac2g" || c == "fwdbwd" ||
      c == "async_cpu_to_gpu" || c == "overhead" || c == "python_sync_marker")
    return Cat::Ignored;
  return Cat::Unknown;
}

RuntimeKind classify_runtime(std::string_view n) {
  if (n.starts_with("AscendCL@")) n.remove_prefix(9);
  if (n.starts_with("aclrtSynchronize")) return RuntimeKind::Sync;  // Stream, Device, Event, StreamWithTimeout
  static constexpr std::string_view kSyncs[] = {
      "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize",
      "cuCtxSynchronize",      "cuEventSynchronize",    "hipStreamSynchronize", "hipDeviceSynchronize",
      "hipEventSynchronize"};
  for (auto s : kSyncs)
    if (n == s) return RuntimeKind::Sync;
  // cudaStreamWaitEvent is a device-side wait: the host does not block, so it stays Other.
  if (n.find("LaunchKernel") != n.npos || n.find("LaunchCooperativeKernel") != n.npos || n == "cudaGraphLaunch" ||
      n == "hipGraphLaunch")
    return RuntimeKind::Launch;
  if (n.find("Memcpy") != n.npos) return RuntimeKind::Memcpy;
  if (n.find("Malloc") != n.npos) return RuntimeKind::Malloc;
  return RuntimeKind::Other;
}

CopyDir copy_dir(std::string_view name, std::string_view kind) {
  for (std::string_view s : {name, kind}) {
    if (s.find("HtoD") != s.npos) return CopyDir::HtoD;
    if (s.find("DtoH") != s.npos) return CopyDir::DtoH;
    if (s.find("DtoD") != s.npos) return CopyDir::DtoD;
    if (s.find("HtoH") != s.npos) return CopyDir::HtoH;
    if (s.find("PtoP") != s.npos) return CopyDir::PtoP;
  }
  return CopyDir::Other;
}

TaskKind ascend_task_kind(std::string_view t) {
  if (t == "AI_CPU") return TaskKind::AiCpu;
  if (t.find("HCCL") != t.npos || t.find("COMMUNICATION") != t.npos) return TaskKind::Communication;
  if (t.find("MEMCPY") != t.npos) return TaskKind::Memcpy;
  if (t == "EVENT_WAIT" || t == "NOTIFY_WAIT") return TaskKind::Sync;
  return TaskKind::Kernel;  // AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV, Other, ...
}

// Kineto "Input type" entries that are not tensors.
bool is_tensor_type(std::string_view t) {
  if (t.empty()) return false;
  static constexpr std::string_view kNot[] = {"Scalar", "ScalarList", "GenericList", "TensorList", "None",
                                              "String", "Device",     "Layout",      "ScalarType", "MemoryFormat"};
  for (auto n : kNot)
    if (t == n) return false;
  return true;
}

bool parse_step_name(std::string_view name, int64_t& number) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!name.starts_with(kPrefix)) return false;
  name.remove_prefix(kPrefix.size());
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), number);
  return ec == std::errc() && p == name.data() + name.size();
}

// Frames whose file is inside torch or site-packages are not the user's code.
// Code the program did not write: absolute paths into torch or an installed package, and the
// paths Kineto shortens relative to sys.path ("torch/nn/modules/module.py",
// "transformers/masking_utils.py", "threading.py"), whose first part names a library.
bool is_library_file(std::string_view f) {
  if (f.find("/torch/") != f.npos || f.find("site-packages") != f.npos || f.find("dist-packages") != f.npos ||
      f.starts_with("<"))
    return true;
  if (f.starts_with("/")) return false;
  std::string_view root = f.substr(0, f.find('/'));
  static constexpr std::string_view kLibraries[] = {
      "torch", "torch_npu", "torchvision", "torchaudio", "functorch", "torchgen", "triton", "numpy", "transformers",
      "accelerate", "timm", "datasets", "tokenizers", "safetensors", "huggingface_hub", "peft", "trl", "deepspeed",
      "apex", "megatron", "lightning", "pytorch_lightning", "einops", "scipy", "sklearn", "pandas",
      // the standard library, as Kineto shortens it
      "multiprocessing", "concurrent", "asyncio", "importlib", "json", "logging", "unittest", "collections",
      "threading.py", "runpy.py", "contextlib.py", "functools.py", "queue.py", "selectors.py", "socket.py",
      "typing.py", "abc.py", "copy.py", "weakref.py", "random.py", "warnings.py", "enum.py", "inspect.py"};
  for (std::string_view lib : kLibraries)
    if (root == lib) return true;
  return false;
}

// Filling a big reserved vector page by page costs one page fault per 4 KiB, which on
// virtual machines is a large share of the reading time; 2 MiB pages cut that 512-fold.
// But where the kernel compacts memory on the spot for advised regions (THP defrag
// "madvise", Linux's default, "defer+madvise" or "always"), a fault can stall for that: on
// the 2-core development VM a 300 MB read took 1.05-1.60 s advised and 1.02-1.27 s not, with
// the same median (bench/README.md "Huge pages"). So the advice is given only where a
// missing huge page falls back to 4 KiB at once ("defer", "never").
bool huge_pages_without_stalls() {
  static const bool ok = [] {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/defrag");
    std::string modes;
    std::getline(f, modes);
    return modes.find("[defer]") != std::string::npos || modes.find("[never]") != std::string::npos;
  }();
  return ok;
}

template <typename T>
void advise_huge_pages(std::vector<T>& v) {
  if (!huge_pages_without_stalls()) return;
  constexpr uintptr_t kHuge = 2u << 20;
  uintptr_t begin = reinterpret_cast<uintptr_t>(v.data());
  uintptr_t end = begin + v.capacity() * sizeof(T);
  begin = (begin + kHuge - 1) & ~(kHuge - 1);
  end &= ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

enum class Role : uint8_t { Unknown, Python, Cann, AscendHardware, Overlap, Hccl };

// An event without "cat" (torch_npu trace_view.json): what it is depends on its process,
// whose name may come later in the file, so it waits until the end.
struct Deferred {
  StrId name;
  StrId task_type;
  int64_t pid;
  int32_t pid32, tid;
  int64_t start_ns, dur_ns;
  int32_t stream;
  int64_t correlation, external_id;
};

class ChromeBuilder {
 public:
  ChromeBuilder(Trace& t, JsonEventStream& s, const std::string& file)
      : t_(t), stream_(s), file_(file), amp_(aux_parser_, file) {}

  // Reserves for a trace of about `bytes` of JSON. Unused capacity is address space
  // only (pages are touched when filled), so erring high costs no resident memory while
  // it saves the copies and the double peak of vector growth.
  void reserve(uint64_t bytes) {
    if (bytes < (1u << 20)) return;
    t_.ops.reserve(bytes / 400);
    t_.kernels.reserve(bytes / 800);
    t_.runtime.reserve(bytes / 600);
    t_.tensors.reserve(bytes / 150);
    t_.tensor_refs.reserve(bytes / 150);
    t_.dims.reserve(bytes / 80);
    advise_huge_pages(t_.ops);
    advise_huge_pages(t_.kernels);
    advise_huge_pages(t_.runtime);
    advise_huge_pages(t_.tensors);
    advise_huge_pages(t_.tensor_refs);
    advise_huge_pages(t_.dims);
  }
  void on_event(const JsonEventStream::Item& it);
  void on_top_value(const JsonEventStream::Item& it);
  void finish();

 private:
  enum Which : uint8_t { kOp, kKernel, kRuntime, kStep, kDeferred, kNothing };
  struct Ref {
    Which which = kNothing;
    uint32_t index = 0;
  };

  Ref complete(uint64_t offset);
  void instant();
  void metadata(uint64_t offset);
  void amp_record();
  int32_t pid32();
  int32_t tid32();
  void add_kineto_inputs(Op& op);
  void add_capture_tensors(const std::vector<CaptureTensor>& ts, uint32_t& begin, uint32_t& count);
  uint32_t legacy_stack(std::string_view text);
  uint32_t python_function_frame(std::string_view name);
  void read_packages(std::string_view raw);
  uint32_t capture_stack(std::string_view raw);
  uint32_t frame(std::string_view file, int32_t line, std::string_view func);
  int64_t* start_of(Ref r);
  int64_t* dur_of(Ref r);
  TaskKind kernel_kind(StrId name);
  RuntimeKind runtime_kind(StrId name);
  void skip(uint64_t offset);
  void check_time_range(const JsonEventStream::Item& it);
  bool shape_ok(const int64_t* dims, size_t rank);

  Trace& t_;
  JsonEventStream& stream_;
  const std::string& file_;
  NpuLaunchLinks npu_links_;   // torch_npu async_npu flows: device task -> launching op
  od::parser parser_;
  od::parser aux_parser_;
  EventFields ev_;
  AmpFieldReader amp_;

  bool is_capture_ = false;
  bool have_step_numbers_ = false;
  bool saw_gpu_ = false;
  int64_t base_ns_ = 0;
  bool have_base_ = false;

  std::unordered_map<int64_t, Role> roles_;
  std::unordered_map<int64_t, int32_t> big_ids_;
  std::vector<Deferred> deferred_;
  std::unordered_map<uint64_t, std::vector<Ref>> open_;  // B events per thread
  uint64_t unmatched_end_ = 0;

  StringPool stack_keys_;                 // stack text -> id in stack_of_key_
  std::vector<uint32_t> stack_of_key_;
  std::unordered_map<uint64_t, uint32_t> frame_index_;
  std::vector<int8_t> kernel_kind_cache_;   // by StrId, -1 = not yet known
  std::vector<int8_t> runtime_kind_cache_;
  std::vector<int64_t> scratch_shape_;

  uint64_t skipped_ = 0;
  uint64_t first_skipped_offset_ = 0;
  std::string first_skipped_;

  // Events with a negative "dur": read with duration 0 (clamped, not refused: one clock
  // glitch should not lose a whole rank's profile), counted and the first one named in a
  // warning, so that a device time of 0 is never silent.
  uint64_t negative_durs_ = 0;
  uint64_t first_negative_dur_offset_ = 0;
  std::string first_negative_dur_;
  uint64_t event_index_ = 0;   // of the event being read

  // Limits of ingest/limits.hpp: what was cut or dropped, warned about once in finish().
  uint64_t event_offset_ = 0;  // of the event being read
  uint64_t cut_stacks_ = 0, first_cut_stack_offset_ = 0;
  uint64_t dropped_shapes_ = 0, first_dropped_shape_offset_ = 0;
  int64_t min_time_ns_ = std::numeric_limits<int64_t>::max();
  int64_t max_time_ns_ = std::numeric_limits<int64_t>::min();
};

void ChromeBuilder::skip(uint64_t offset) {
  if (skipped_++ == 0) {
    first_skipped_offset_ = offset;
    first_skipped_ = fmt::format("ph '{}' cat \"{}\" name \"{}\"", ev_.ph ? std::string(1, ev_.ph) : std::string(),
                                 ev_.cat.substr(0, 60), ev_.name.substr(0, 60));
  }
}

// Every time must stay exact int64 ns after the reader and the rules add durations and
// subtract the earliest start: an end (ts + dur) or a span that does not fit is refused.
void ChromeBuilder::check_time_range(const JsonEventStream::Item& it) {
  int64_t end = ev_.ts_ns;
  if (ev_.has_dur && ev_.dur_ns > 0 && __builtin_add_overflow(ev_.ts_ns, ev_.dur_ns, &end))
    throw InputError(file_, it.offset,
                     fmt::format("event #{}: \"ts\" + \"dur\" is past the int64 nanosecond range (about 292 years)",
                                 it.index));
  min_time_ns_ = std::min(min_time_ns_, ev_.ts_ns);
  max_time_ns_ = std::max(max_time_ns_, end);
  int64_t span;
  if (__builtin_sub_overflow(max_time_ns_, min_time_ns_, &span))
    throw InputError(file_, it.offset,
                     fmt::format("event #{}: its time is so far from the other events' that the trace would span more "
                                 "than int64 nanoseconds hold (about 292 years)",
                                 it.index));
}

// A shape is kept when its rank and element count are within limits (so that numel() times
// any element size fits int64); otherwise the tensor keeps no shape and finish() warns.
bool ChromeBuilder::shape_ok(const int64_t* dims, size_t rank) {
  bool ok = rank <= limits::kMaxRank;
  uint64_t elements = 1;
  for (size_t i = 0; ok && i < rank; ++i) {
    int64_t d = dims[i];
    if (d == 0) continue;
    if (d == std::numeric_limits<int64_t>::min()) ok = false;
    else if (__builtin_mul_overflow(elements, uint64_t(d < 0 ? -d : d), &elements) || elements > limits::kMaxElements)
      ok = false;
  }
  if (!ok && dropped_shapes_++ == 0) first_dropped_shape_offset_ = event_offset_;
  return ok;
}

int32_t ChromeBuilder::pid32() {
  if (!ev_.pid_str.empty()) return -int32_t(t_.intern(ev_.pid_str) & 0x3fffffff) - 1;
  if (ev_.pid >= std::numeric_limits<int32_t>::min() && ev_.pid <= std::numeric_limits<int32_t>::max())
    return int32_t(ev_.pid);
  auto [it, fresh] = big_ids_.try_emplace(ev_.pid, std::numeric_limits<int32_t>::min() + int32_t(big_ids_.size()));
  return it->second;
}

int32_t ChromeBuilder::tid32() {
  if (!ev_.tid_str.empty()) return -int32_t(t_.intern(ev_.tid_str) & 0x3fffffff) - 1;
  if (ev_.tid >= std::numeric_limits<int32_t>::min() && ev_.tid <= std::numeric_limits<int32_t>::max())
    return int32_t(ev_.tid);
  auto [it, fresh] = big_ids_.try_emplace(ev_.tid, std::numeric_limits<int32_t>::min() + int32_t(big_ids_.size()));
  return it->second;
}

TaskKind ChromeBuilder::kernel_kind(StrId name) {
  if (name >= kernel_kind_cache_.size()) kernel_kind_cache_.resize(t_.strings.size() + 1024, -1);
  int8_t& k = kernel_kind_cache_[name];
  if (k < 0) {
    std::string_view n = t_.str(name);
    k = int8_t(icontains(n, "nccl") || icontains(n, "hccl") ? TaskKind::Communication : TaskKind::Kernel);
  }
  return TaskKind(k);
}

RuntimeKind ChromeBuilder::runtime_kind(StrId name) {
  if (name >= runtime_kind_cache_.size()) runtime_kind_cache_.resize(t_.strings.size() + 1024, -1);
  int8_t& k = runtime_kind_cache_[name];
  if (k < 0) k = int8_t(classify_runtime(t_.str(name)));
  return RuntimeKind(k);
}

uint32_t ChromeBuilder::frame(std::string_view file, int32_t line, std::string_view func) {
  StrId f = t_.intern(file), fn = t_.intern(func);
  uint64_t key = (uint64_t(f) * 0x9E3779B97F4A7C15ull) ^ (uint64_t(uint32_t(line)) << 32) ^ fn;
  auto it = frame_index_.find(key);
  if (it != frame_index_.end()) {
    const Frame& fr = t_.frames[it->second];
    if (fr.file == f && fr.line == line && fr.function == fn) return it->second;
    return t_.add_frame(file, line, func);  // hash collision: just do not share
  }
  uint32_t id = t_.add_frame(file, line, func);
  frame_index_.emplace(key, id);
  return id;
}

// Legacy Kineto "Call stack": "file(line): func;file(line): func", innermost first.
uint32_t ChromeBuilder::legacy_stack(std::string_view text) {
  StrId key = stack_keys_.intern(text);
  if (key < stack_of_key_.size() && stack_of_key_[key] != kNone) return stack_of_key_[key];
  std::vector<uint32_t> all, user;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t semi = text.find(';', pos);
    std::string_view seg = text.substr(pos, semi == text.npos ? text.npos : semi - pos);
    pos = semi == text.npos ? text.size() + 1 : semi + 1;
    while (!seg.empty() && seg.front() == ' ') seg.remove_prefix(1);
    if (seg.empty()) continue;
    std::string_view file = seg, func;
    int32_t line = 0;
    size_t close = seg.find("): ");
    size_t open = close == seg.npos ? seg.npos : seg.rfind('(', close);
    if (open != seg.npos) {
      file = seg.substr(0, open);
      std::string_view num = seg.substr(open + 1, close - open - 1);
      std::from_chars(num.data(), num.data() + num.size(), line);
      func = seg.substr(close + 3);
    }
    if (all.size() == limits::kMaxStackFrames) {  // innermost frames first: keep those
      if (cut_stacks_++ == 0) first_cut_stack_offset_ = event_offset_;
      break;
    }
    uint32_t id = frame(file, line, func);
    all.push_back(id);
    if (!is_library_file(file)) user.push_back(id);
  }
  uint32_t sid = all.empty() ? kNone : t_.add_stack(user.empty() ? all : user);
  if (key >= stack_of_key_.size()) stack_of_key_.resize(key + 1, kNone);
  stack_of_key_[key] = sid;
  return sid;
}

// "npu_doctor_packages": {"transformers": "5.17.0", ...} -> env "package:transformers" = "5.17.0"
// (analysis/source_sites names a finding's package with the version that ran). Entries that are
// not strings are skipped.
void ChromeBuilder::read_packages(std::string_view raw) {
  od::document doc;
  od::object obj;
  if (aux_parser_.iterate(simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + simdjson::SIMDJSON_PADDING))
              .get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(obj) != simdjson::SUCCESS)
    return;
  size_t n = 0;
  for (auto f_res : obj) {
    od::field f;
    std::string_view key, value;
    if (std::move(f_res).get(f) || unescaped_key(f).get(key) || f.value().get_string().get(value)) continue;
    if (++n > 4096) break;   // a program imports hundreds of packages at most
    t_.set_env(fmt::format("package:{}", key), value);
  }
}

// Kineto's python_function events are named "file(line): func" (with_stack=True): one of the
// program's own files gives the ops nested in it their file:line; library functions (torch,
// site-packages) give none, so the walk up to the user's frame continues past them.
// Its line is where the function starts (or, for frames already running when the profiler
// started, where they were then): `<module>` frames, whose line says nothing about the op, give
// none.
uint32_t ChromeBuilder::python_function_frame(std::string_view name) {
  size_t close = name.find("): ");
  if (close == name.npos || name.rfind('(', close) == name.npos || name.substr(close + 3) == "<module>") return kNone;
  if (is_library_file(name.substr(0, name.rfind('(', close)))) return kNone;
  return legacy_stack(name);
}

// Capture "stack": [[file, line, func], ...], user frames only, innermost first.
uint32_t ChromeBuilder::capture_stack(std::string_view raw) {
  StrId key = stack_keys_.intern(raw);
  if (key < stack_of_key_.size() && stack_of_key_[key] != kNone) return stack_of_key_[key];
  std::vector<uint32_t> ids;
  od::document doc;
  // raw lies inside the event buffer, which stays readable for simdjson::SIMDJSON_PADDING bytes past it
  if (aux_parser_.iterate(simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + simdjson::SIMDJSON_PADDING))
          .get(doc) == simdjson::SUCCESS) {
    od::array frames;
    if (doc.get_array().get(frames) == simdjson::SUCCESS) {
      for (auto fr_res : frames) {
        if (ids.size() == limits::kMaxStackFrames) {  // innermost frames first: keep those
          if (cut_stacks_++ == 0) first_cut_stack_offset_ = event_offset_;
          break;
        }
        od::array fr;
        if (fr_res.get_array().get(fr)) break;
        std::string_view file, func;
        int64_t line = 0;
        int i = 0;
        for (auto x : fr) {
          if (i == 0 && x.get_string().get(file)) file = {};
          else if (i == 1 && x.get_int64().get(line)) line = 0;
          else if (i == 2 && x.get_string().get(func)) func = {};
          ++i;
        }
        // file/func views live in aux_parser_'s buffer: interned right away by frame()
        ids.push_back(frame(file, int32_t(std::clamp<int64_t>(line, 0, std::numeric_limits<int32_t>::max())), func));
      }
    }
  }
  uint32_t sid = ids.empty() ? kNone : t_.add_stack(ids);
  if (key >= stack_of_key_.size()) stack_of_key_.resize(key + 1, kNone);
  stack_of_key_[key] = sid;
  return sid;
}

void ChromeBuilder::add_kineto_inputs(Op& op) {
  const NestedInts& d = ev_.dims;
  const NestedInts& s = ev_.strides;
  size_t n = std::max(d.top.size(), ev_.types.size());
  op.inputs_begin = uint32_t(t_.tensor_refs.size());
  auto add = [&](std::string_view dtype, bool is_tensor, const NestedInts::Entry* shape, const NestedInts::Entry* str,
                 const std::vector<int64_t>& sints) {
    TensorMeta m;
    m.dtype = t_.intern(dtype);
    m.is_tensor = is_tensor;
    if (is_tensor && shape && shape->kind == NestedInts::Entry::Ints &&
        shape_ok(d.ints.data() + shape->begin, shape->count)) {
      m.dims_begin = uint32_t(t_.dims.size());
      m.rank = uint8_t(shape->count);
      m.has_shape = true;
      t_.dims.insert(t_.dims.end(), d.ints.begin() + shape->begin, d.ints.begin() + shape->begin + shape->count);
      if (str && str->kind == NestedInts::Entry::Ints && str->count == shape->count) {
        m.has_strides = true;
        t_.dims.insert(t_.dims.end(), sints.begin() + str->begin, sints.begin() + str->begin + str->count);
      }
    }
    t_.tensor_refs.push_back(t_.add_tensor(m));
  };
  for (size_t i = 0; i < n; ++i) {
    std::string_view type = i < ev_.types.size() ? ev_.types[i] : std::string_view{};
    const NestedInts::Entry* de = i < d.top.size() ? &d.top[i] : nullptr;
    const NestedInts::Entry* se = i < s.top.size() ? &s.top[i] : nullptr;
    if (de && de->kind == NestedInts::Entry::Lists) {
      // a tensor list: one entry per element
      for (uint32_t j = 0; j < de->count; ++j) {
        const NestedInts::Entry* ss =
            (se && se->kind == NestedInts::Entry::Lists && j < se->count) ? &s.lists[se->begin + j] : nullptr;
        add({}, true, &d.lists[de->begin + j], ss, s.ints);
      }
      continue;
    }
    bool tensor = ev_.has_types ? is_tensor_type(type) : (de && de->count > 0);
    add(type, tensor, de, se, s.ints);
  }
  op.inputs_count = uint32_t(t_.tensor_refs.size()) - op.inputs_begin;
}

void ChromeBuilder::add_capture_tensors(const std::vector<CaptureTensor>& ts, uint32_t& begin, uint32_t& count) {
  begin = uint32_t(t_.tensor_refs.size());
  for (const CaptureTensor& c : ts) {
    TensorMeta m;
    m.id = c.id;
    m.storage = c.storage;
    m.storage_offset = c.offset;
    m.requires_grad = c.requires_grad;
    m.dtype = t_.intern(c.dtype);
    m.device = t_.intern(c.device);
    if (!c.layout.empty() && c.layout != "strided") m.layout = t_.intern(c.layout);
    if (c.has_shape && shape_ok(ev_.tensor_ints.data() + c.shape_begin, c.shape_count)) {
      m.has_shape = true;
      m.rank = uint8_t(c.shape_count);
      m.dims_begin = uint32_t(t_.dims.size());
      auto& ints = ev_.tensor_ints;
      t_.dims.insert(t_.dims.end(), ints.begin() + c.shape_begin, ints.begin() + c.shape_begin + c.shape_count);
      if (c.has_strides && c.strides_count == c.shape_count) {
        m.has_strides = true;
        t_.dims.insert(t_.dims.end(), ints.begin() + c.strides_begin,
                       ints.begin() + c.strides_begin + c.strides_count);
      }
    }
    t_.tensor_refs.push_back(t_.add_tensor(m));
  }
  count = uint32_t(t_.tensor_refs.size()) - begin;
}

ChromeBuilder::Ref ChromeBuilder::complete(uint64_t offset) {
  if (!ev_.has_ts) {
    skip(offset);
    return {};
  }
  if (ev_.has_dur && ev_.dur_ns < 0 && negative_durs_++ == 0) {
    first_negative_dur_offset_ = offset;
    first_negative_dur_ = fmt::format("event #{} name \"{}\" \"dur\" {:g} us", event_index_, ev_.name.substr(0, 60),
                                      double(ev_.dur_ns) / 1e3);
  }
  int64_t dur = std::max<int64_t>(ev_.dur_ns, 0);
  Cat cat = ev_.has_cat ? classify_cat(ev_.cat) : Cat::None;
  int64_t number;
  if ((cat == Cat::Aten || cat == Cat::Annotation) && parse_step_name(ev_.name, number)) {
    t_.steps.push_back({number, ev_.ts_ns, dur});
    return {kStep, uint32_t(t_.steps.size() - 1)};
  }
  switch (cat) {
    case Cat::Aten:
    case Cat::Annotation:
    case Cat::Python:
    case Cat::PythonSync:
    case Cat::Api:
    case Cat::Placement:
    case Cat::OptimizerStep:
    case Cat::HostOther: {
      Op op;
      op.name = t_.intern(ev_.name);
      op.kind = cat == Cat::Aten         ? OpKind::Aten
                : cat == Cat::Annotation ? OpKind::Annotation
                : cat == Cat::Python     ? OpKind::Python
                : cat == Cat::PythonSync ? OpKind::PythonSync
                : cat == Cat::Api        ? OpKind::Api
                : cat == Cat::Placement  ? OpKind::Placement
                : cat == Cat::OptimizerStep ? OpKind::OptimizerStep
                                         : OpKind::Other;
      op.pid = pid32();
      op.tid = tid32();
      op.start_ns = ev_.ts_ns;
      op.dur_ns = dur;
      op.external_id = ev_.external_id;
      op.sequence = ev_.sequence;
      if (!ev_.module.empty()) op.module = t_.intern(ev_.module);
      if (!ev_.reason.empty()) op.detail = t_.intern(ev_.reason);
      if (ev_.has_bwd) {
        op.backward = true;
        if (!ev_.bwd.empty()) op.forward_op = t_.intern(ev_.bwd);
      }
      if (!ev_.stack_raw.empty()) op.stack = capture_stack(ev_.stack_raw);
      else if (!ev_.call_stack.empty()) op.stack = legacy_stack(ev_.call_stack);
      else if (cat == Cat::Python) op.stack = python_function_frame(ev_.name);
      if (ev_.has_inputs || ev_.has_outputs) {
        add_capture_tensors(ev_.inputs, op.inputs_begin, op.inputs_count);
        add_capture_tensors(ev_.outputs, op.outputs_begin, op.outputs_count);
      } else if (ev_.dims.present || ev_.has_types) {
        add_kineto_inputs(op);
      }
      if (is_capture_ && ev_.step >= 0 && ev_.step <= std::numeric_limits<int32_t>::max()) {
        op.step = int32_t(ev_.step);  // a step NUMBER until finish() maps it to an index
        have_step_numbers_ = true;
      }
      if (is_capture_ && !ev_.amp[kAmpNumeric].empty()) {
        OpNumeric n;
        amp_.numeric(ev_.amp[kAmpNumeric], t_, n);
        op.numeric = uint32_t(t_.numerics.size());
        t_.numerics.push_back(n);
      }
      t_.ops.push_back(op);
      return {kOp, uint32_t(t_.ops.size() - 1)};
    }
    case Cat::Kernel:
    case Cat::Memcpy:
    case Cat::Memset:
    case Cat::CudaSync:
    case Cat::DeviceOther: {
      Kernel k;
      k.name = t_.intern(ev_.name);
      switch (cat) {
        case Cat::Kernel: k.kind = kernel_kind(k.name); break;
        case Cat::Memcpy:
          k.kind = TaskKind::Memcpy;
          k.copy = copy_dir(ev_.name, ev_.copy_kind);
          break;
        case Cat::Memset: k.kind = TaskKind::Memset; break;
        case Cat::CudaSync: k.kind = TaskKind::Sync; break;
        default: k.kind = TaskKind::Other; break;
      }
      k.task_type = t_.intern(cat == Cat::CudaSync && !ev_.sync_kind.empty() ? ev_.sync_kind : ev_.cat);
      k.device = ev_.device >= 0 && ev_.device < 1 << 20 ? int32_t(ev_.device) : -1;
      k.stream = ev_.stream >= 0 && ev_.stream < 1ll << 31 ? int32_t(ev_.stream) : -1;
      k.start_ns = ev_.ts_ns;
      k.dur_ns = dur;
      k.correlation = ev_.correlation;
      k.external_id = ev_.external_id;
      if (cat == Cat::Memcpy || cat == Cat::Memset) k.bytes = ev_.bytes;
      if (cat != Cat::DeviceOther) saw_gpu_ = true;
      t_.kernels.push_back(k);
      return {kKernel, uint32_t(t_.kernels.size() - 1)};
    }
    case Cat::Runtime: {
      RuntimeCall r;
      r.name = t_.intern(ev_.name);
      r.kind = runtime_kind(r.name);
      r.pid = pid32();
      r.tid = tid32();
      r.start_ns = ev_.ts_ns;
      r.dur_ns = dur;
      r.correlation = ev_.correlation;
      r.external_id = ev_.external_id;
      if (ev_.cat.starts_with("cuda")) saw_gpu_ = true;
      t_.runtime.push_back(r);
      return {kRuntime, uint32_t(t_.runtime.size() - 1)};
    }
    case Cat::None: {
      Deferred d;
      d.name = t_.intern(ev_.name);
      d.task_type = ev_.task_type.empty() ? 0 : t_.intern(ev_.task_type);
      d.pid = ev_.pid_str.empty() ? ev_.pid : std::numeric_limits<int64_t>::min();
      d.pid32 = pid32();
      d.tid = tid32();
      d.start_ns = ev_.ts_ns;
      d.dur_ns = dur;
      d.stream = ev_.stream >= 0 && ev_.stream < 1ll << 31 ? int32_t(ev_.stream) : -1;
      d.correlation = ev_.correlation;
      d.external_id = ev_.external_id;
      deferred_.push_back(d);
      return {kDeferred, uint32_t(deferred_.size() - 1)};
    }
    case Cat::Amp:
      amp_record();
      return {};
    case Cat::Ignored:
      return {};
    case Cat::Instant:
    case Cat::Unknown:
      break;
  }
  skip(offset);
  return {};
}

void ChromeBuilder::instant() {
  if (ev_.name == "[memory]" || (ev_.has_cat && ev_.cat == "cpu_instant_event" && ev_.has_mem_bytes)) {
    if (!ev_.has_ts) return;
    MemoryEvent m;
    m.ts_ns = ev_.ts_ns;
    m.bytes = ev_.mem_bytes;
    m.total_allocated = ev_.total_allocated;
    m.total_reserved = ev_.total_reserved;
    m.device = ev_.device >= -1 && ev_.device < 1 << 20 ? int32_t(ev_.device) : -1;
    t_.memory.push_back(m);
  } else if (ev_.has_cat && classify_cat(ev_.cat) == Cat::Amp) {
    if (ev_.has_ts) amp_record();
    else skip(0);
  } else if (ev_.name == "npu_doctor_error") {
    CaptureStatus& c = t_.capture;
    if (c.error.empty()) {
      c.error = ev_.message.empty() ? "an internal error" : std::string(ev_.message);
      c.error_op = ev_.op;
      c.error_thread = ev_.thread;
      c.error_where = ev_.where;
    }
  }
}

// The newest capture format version this reader knows (docs/formats/capture.md).
constexpr int64_t kCaptureFormatVersion = 1;

void ChromeBuilder::metadata(uint64_t offset) {
  if (ev_.name == "process_name") {
    Role r = Role::Unknown;
    if (ev_.arg_name == "Python") r = Role::Python;
    else if (ev_.arg_name == "CANN") r = Role::Cann;
    else if (ev_.arg_name == "Ascend Hardware") r = Role::AscendHardware;
    else if (ev_.arg_name == "Overlap Analysis") r = Role::Overlap;
    else if (ev_.arg_name == "HCCL" || ev_.arg_name == "Communication") r = Role::Hccl;  // ingest/hccl_tasks.cpp
    if (r != Role::Unknown && ev_.pid_str.empty()) roles_[ev_.pid] = r;
    if (r == Role::Cann || r == Role::AscendHardware) t_.set_env("device", "npu");
  } else if (ev_.name == "npu_doctor" && ev_.format == "npu-doctor-capture") {
    if (ev_.capture_version > kCaptureFormatVersion)
      throw InputError(file_, offset,
                       fmt::format("capture format version {} is newer than this npu-doctor reads ({}): update "
                                   "npu-doctor, or capture with the shim of this one",
                                   ev_.capture_version, kCaptureFormatVersion));
    is_capture_ = true;
    t_.format = InputFormat::Capture;
    stream_.set_allow_truncated(true);  // a killed program leaves a cut-off last line
    stream_.set_event_per_line(true);   // ... and only the last
    t_.set_env("torch", ev_.torch);
    t_.set_env("python", ev_.python);
    t_.set_env("device", ev_.device_str);
    t_.set_env("torch_npu", ev_.torch_npu);
    t_.set_env("argv", ev_.argv);
    if (!ev_.cwd.empty()) t_.set_env("cwd", ev_.cwd);
    if (!ev_.steps.empty()) t_.set_env("steps", ev_.steps);
    // A worker of a distributed launch: the cluster view places it (cluster/rank_summary).
    if (ev_.capture_rank >= 0) t_.set_env("rank", std::to_string(ev_.capture_rank));
    if (ev_.capture_world_size > 0) t_.set_env("world_size", std::to_string(ev_.capture_world_size));
    if (ev_.has_amp) amp_.header(ev_, t_);
  } else if (ev_.name == "npu_doctor_end" && is_capture_) {
    t_.capture.ended = true;
    t_.capture.reason = ev_.reason;
    t_.capture.steps_completed = ev_.steps_completed;
    if (!ev_.message.empty()) t_.capture.exception = ev_.message;
  } else if (ev_.name == "npu_doctor_packages" && is_capture_ && !ev_.packages_raw.empty()) {
    read_packages(ev_.packages_raw);
  } else if (ev_.name == "npu_doctor_op" && is_capture_ && !ev_.op.empty()) {
    OpDispatch d;
    d.op = t_.intern(ev_.op);
    d.kind = ev_.dispatch.size() == 1 ? ev_.dispatch[0] : 0;
    d.cpu_kernel = ev_.cpu_kernel;
    d.expanded = ev_.expanded;
    t_.op_dispatch.push_back(d);
  }
}

// amp-check records (docs/formats/amp.md): gradient histograms and GradScaler/autocast calls.
void ChromeBuilder::amp_record() {
  if (ev_.cat == "amp_grad") {
    if (ev_.name != "grad_histogram") return;
    GradHistogram g;
    amp_.grad_histogram(ev_, t_, g);
    t_.grad_histograms.push_back(g);
    return;
  }
  AmpCall c;
  c.name = t_.intern(ev_.name);
  c.kind = classify_amp_call(ev_.name);
  c.ts_ns = ev_.ts_ns;
  c.step = ev_.step;
  if (!ev_.stack_raw.empty()) c.stack = capture_stack(ev_.stack_raw);
  amp_.amp_call(ev_, t_, c);
  t_.amp_calls.push_back(c);
}

int64_t* ChromeBuilder::start_of(Ref r) {
  switch (r.which) {
    case kOp: return &t_.ops[r.index].start_ns;
    case kKernel: return &t_.kernels[r.index].start_ns;
    case kRuntime: return &t_.runtime[r.index].start_ns;
    case kStep: return &t_.steps[r.index].start_ns;
    case kDeferred: return &deferred_[r.index].start_ns;
    default: return nullptr;
  }
}

int64_t* ChromeBuilder::dur_of(Ref r) {
  switch (r.which) {
    case kOp: return &t_.ops[r.index].dur_ns;
    case kKernel: return &t_.kernels[r.index].dur_ns;
    case kRuntime: return &t_.runtime[r.index].dur_ns;
    case kStep: return &t_.steps[r.index].dur_ns;
    case kDeferred: return &deferred_[r.index].dur_ns;
    default: return nullptr;
  }
}

void ChromeBuilder::on_event(const JsonEventStream::Item& it) {
  parse_event(parser_, it.data, it.len, it.offset, it.index, file_, ev_);
  event_offset_ = it.offset;
  event_index_ = it.index;
  if (ev_.has_ts) check_time_range(it);
  if (ev_.has_amp) amp_.set_event(it.data, it.offset, it.index);
  switch (ev_.ph) {
    case 'X':
      complete(it.offset);
      break;
    case 'B': {
      Ref r = complete(it.offset);
      uint64_t key = (uint64_t(uint32_t(pid32())) << 32) | uint32_t(tid32());
      open_[key].push_back(r);  // kept even when skipped, so that its 'E' pairs with it
      break;
    }
    case 'E': {
      uint64_t key = (uint64_t(uint32_t(pid32())) << 32) | uint32_t(tid32());
      auto found = open_.find(key);
      if (found == open_.end() || found->second.empty()) {
        ++unmatched_end_;
        break;
      }
      Ref r = found->second.back();
      found->second.pop_back();
      if (int64_t* s = start_of(r); s && ev_.has_ts) *dur_of(r) = std::max<int64_t>(ev_.ts_ns - *s, 0);
      break;
    }
    case 'i':
    case 'I':
      instant();
      break;
    case 'M':
      metadata(it.offset);
      break;
    case 's': case 'f':
      if (ev_.has_ts && ev_.flow_id >= 0 && ev_.cat == "async_npu") npu_links_.add(ev_.ph, ev_.flow_id, pid32(), tid32(), ev_.ts_ns);
      break;  // other flows: Kineto links ops and kernels by "External id" args
    case 'C':
      if (ev_.has_ts && ev_.mhz >= 0 && ev_.name == "AI Core Freq") t_.ai_core_freq.push_back({ev_.ts_ns, float(ev_.mhz)});
      break;  // other counters: nothing the analyses use
    case 't': case 'b': case 'e': case 'n':
    case 'N': case 'O': case 'D': case 'P': case 'R': case 'c':
      break;  // counters, async and object events: nothing the analyses use
    default:
      skip(it.offset);
      break;
  }
}

void ChromeBuilder::on_top_value(const JsonEventStream::Item& it) {
  od::document doc;
  auto fail = [&](simdjson::error_code e) {
    throw InputError(file_, it.offset,
                     fmt::format("invalid JSON in top-level \"{}\" ({})", it.key, simdjson::error_message(e)));
  };
  if (auto e = parser_.iterate(simdjson::padded_string_view(it.data, it.len, it.len + simdjson::SIMDJSON_PADDING)).get(doc))
    fail(e);
  auto scalar_text = [&](od::document& d) -> std::string {
    std::string_view s;
    if (d.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
    int64_t i;
    if (d.get_int64().get(i) == simdjson::SUCCESS) return std::to_string(i);
    double x;
    if (d.get_double().get(x) == simdjson::SUCCESS) return fmt::format("{}", x);
    return {};
  };
  if (it.key == "displayTimeUnit") {
    // A display hint of the Chrome viewer: ts/dur stay microseconds whatever it says.
    t_.set_env("display_time_unit", scalar_text(doc));
  } else if (it.key == "schemaVersion") {
    t_.set_env("schema_version", scalar_text(doc));
  } else if (it.key == "baseTimeNanoseconds") {
    std::string s = scalar_text(doc);
    int64_t v;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size()) {
      base_ns_ = v;
      have_base_ = true;
      t_.set_env("base_time_ns", s);
    }
  } else if (it.key == "distributedInfo") {
    od::object obj;
    if (doc.get_object().get(obj)) return;
    for (auto f_res : obj) {
      od::field f;
      if (auto e = std::move(f_res).get(f)) fail(e);
      std::string_view k;
      if (auto e = unescaped_key(f).get(k)) fail(e);
      if (k != "rank" && k != "world_size" && k != "backend") continue;
      std::string key(k);
      od::value v = f.value();
      std::string_view s;
      int64_t i;
      if (v.get_int64().get(i) == simdjson::SUCCESS) t_.set_env(key, std::to_string(i));
      else if (v.get_string().get(s) == simdjson::SUCCESS) t_.set_env(key, s);
    }
  } else if (it.key == "deviceProperties") {
    od::array arr;
    if (doc.get_array().get(arr)) return;
    for (auto el : arr) {
      od::object obj;
      if (el.get_object().get(obj)) break;
      std::string_view name;
      if (obj["name"].get_string().get(name) == simdjson::SUCCESS) t_.set_env("device_name", name);
      break;  // the first device names them all
    }
  }
}

void ChromeBuilder::finish() {
  // Events without "cat": torch_npu trace_view.json, classified by their process.
  for (const Deferred& d : deferred_) {
    auto r = roles_.find(d.pid);
    Role role = r == roles_.end() ? Role::Unknown : r->second;
    std::string_view name = t_.str(d.name);
    bool acl = name.starts_with("AscendCL@");
    if (role == Role::Overlap) continue;
    if (role == Role::AscendHardware || (role != Role::Cann && d.task_type != 0)) {
      Kernel k;
      k.name = d.name;
      k.task_type = d.task_type;
      k.kind = ascend_task_kind(t_.str(d.task_type));
      k.stream = d.stream >= 0 ? d.stream : d.tid;
      k.start_ns = d.start_ns;
      k.dur_ns = d.dur_ns;
      k.correlation = d.correlation;
      k.external_id = d.external_id;
      t_.kernels.push_back(k);
    } else if (acl) {
      RuntimeCall rc;
      rc.name = d.name;
      rc.kind = runtime_kind(d.name);
      rc.pid = d.pid32;
      rc.tid = d.tid;
      rc.start_ns = d.start_ns;
      rc.dur_ns = d.dur_ns;
      rc.correlation = d.correlation;
      rc.external_id = d.external_id;
      t_.runtime.push_back(rc);
    } else if (role != Role::Cann && role != Role::Hccl) {  // HCCL tasks: read by ingest/hccl_tasks.cpp
      ++skipped_;
    }
  }
  deferred_.clear();
  deferred_.shrink_to_fit();
  npu_links_.apply(t_);

  const auto& tr = stream_.truncation();
  if (tr.happened) {
    if (tr.inside_event)
      t_.warnings.push_back({fmt::format("dropped a cut-off last event (the input ends at byte {})", tr.end_offset),
                             tr.event_offset});
    else
      t_.warnings.push_back(
          {fmt::format("input ends inside traceEvents at byte {}: file truncated? read what was there", tr.end_offset),
           tr.end_offset});
  }
  uint64_t open_left = 0;
  for (auto& [k, v] : open_) open_left += v.size();
  if (open_left)
    t_.warnings.push_back({fmt::format("{} 'B' events have no matching 'E' (kept with duration 0)", open_left), 0});
  if (unmatched_end_)
    t_.warnings.push_back({fmt::format("{} 'E' events have no matching 'B' (ignored)", unmatched_end_), 0});
  if (skipped_)
    t_.warnings.push_back(
        {fmt::format("skipped {} events of a kind npu-doctor does not read (first: {})", skipped_, first_skipped_),
         first_skipped_offset_});
  if (negative_durs_)
    t_.warnings.push_back({fmt::format("{} event{} with a negative duration, read as 0 (first: {})", negative_durs_,
                                       negative_durs_ == 1 ? "" : "s", first_negative_dur_),
                           first_negative_dur_offset_});
  if (cut_stacks_)
    t_.warnings.push_back({fmt::format("{} call stacks are deeper than {} frames: kept their innermost {}", cut_stacks_,
                                       limits::kMaxStackFrames, limits::kMaxStackFrames),
                           first_cut_stack_offset_});
  if (dropped_shapes_)
    t_.warnings.push_back({fmt::format("{} tensor shapes dropped: rank over {} or more than 2^59 elements "
                                       "(the tensors are kept without a shape)",
                                       dropped_shapes_, limits::kMaxRank),
                           first_dropped_shape_offset_});

  // Capture: a step whose end was never recorded (the program was killed in it, or the tail
  // after the last step end of `--steps all`) has no ProfilerStep event. It is no step: counting
  // it would turn per-step rates into rates over N+1 windows (issue 31 F-9). Its ops stay, outside
  // any step; CAPTURE001 names it.
  if (have_step_numbers_) {
    std::unordered_set<int64_t> ended;
    for (const Step& s : t_.steps) ended.insert(s.number);
    for (const Op& op : t_.ops) {
      if (op.step < 0 || ended.count(op.step)) continue;
      ++t_.capture.unended_step_ops;
      t_.capture.unended_step = std::max(t_.capture.unended_step, int64_t(op.step));
    }
  }

  // Times relative to the earliest event.
  int64_t lo = std::numeric_limits<int64_t>::max();
  for (const Op& o : t_.ops) lo = std::min(lo, o.start_ns);
  for (const Kernel& k : t_.kernels) lo = std::min(lo, k.start_ns);
  for (const RuntimeCall& r : t_.runtime) lo = std::min(lo, r.start_ns);
  for (const Step& s : t_.steps) lo = std::min(lo, s.start_ns);
  for (const MemoryEvent& m : t_.memory) lo = std::min(lo, m.ts_ns);
  for (const GradHistogram& g : t_.grad_histograms) lo = std::min(lo, g.ts_ns);
  for (const AmpCall& c : t_.amp_calls) lo = std::min(lo, c.ts_ns);
  if (lo == std::numeric_limits<int64_t>::max()) lo = 0;
  for (Op& o : t_.ops) o.start_ns -= lo;
  for (Kernel& k : t_.kernels) k.start_ns -= lo;
  for (RuntimeCall& r : t_.runtime) r.start_ns -= lo;
  for (Step& s : t_.steps) s.start_ns -= lo;
  for (MemoryEvent& m : t_.memory) m.ts_ns -= lo;
  for (GradHistogram& g : t_.grad_histograms) g.ts_ns -= lo;
  for (AmpCall& c : t_.amp_calls) c.ts_ns -= lo;
  for (FreqSample& f : t_.ai_core_freq) f.ts_ns -= lo;
  t_.time_origin_ns = lo;
  int64_t absolute;
  if (have_base_ && !__builtin_add_overflow(lo, base_ns_, &absolute)) t_.time_origin_ns = absolute;

  // Op::step holds step numbers so far (captures): sort steps the way finalize() will and
  // turn numbers into indexes.
  std::sort(t_.steps.begin(), t_.steps.end(), [](const Step& a, const Step& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.number < b.number;
  });
  if (have_step_numbers_) {
    std::unordered_map<int64_t, int32_t> index;
    for (size_t i = 0; i < t_.steps.size(); ++i) index.try_emplace(t_.steps[i].number, int32_t(i));
    for (Op& op : t_.ops) {
      if (op.step < 0) continue;
      auto f = index.find(op.step);
      op.step = f == index.end() ? -1 : f->second;
    }
  }

  if (saw_gpu_ && t_.env_value("device").empty()) t_.set_env("device", "cuda");
  t_.input_bytes = stream_.bytes_read();
}

bool wanted_top_key(std::string_view k) {
  return k == "displayTimeUnit" || k == "baseTimeNanoseconds" || k == "distributedInfo" ||
         k == "deviceProperties" || k == "schemaVersion";
}

Trace read_source(ByteSource& src, const std::string& name, const ReadOptions& opts) {
  Trace trace;
  trace.source = name;
  trace.format = InputFormat::KinetoJson;
  // A small input gets a buffer of its size, not the 16 MiB chunk: many small reads (tests,
  // fuzzing, a directory of small traces) would otherwise each allocate and clear 16 MiB.
  size_t chunk = 16u << 20;
  if (!src.compressed() && src.size_hint > 0 && src.size_hint < chunk) chunk = size_t(src.size_hint) + 1;
  JsonEventStream stream(src, name, wanted_top_key, chunk);
  stream.set_allow_truncated(opts.allow_truncated);
  if (opts.progress) stream.set_on_chunk([&] { opts.progress(src.consumed(), src.total()); });
  ChromeBuilder builder(trace, stream, name);
  builder.reserve(src.size_hint);
  JsonEventStream::Item item;
  try {
    while (stream.next(item)) {
      if (item.kind != JsonEventStream::Item::Kind::Event) {
        builder.on_top_value(item);
        continue;
      }
      if (opts.max_events && item.index >= opts.max_events)
        throw InputError(name, item.offset,
                         fmt::format("more than {} events (about {:.1f} GB in memory); pass --max-events N to read "
                                     "more, or profile fewer steps",
                                     opts.max_events, double(opts.max_events) * 150 / 1e9));
      builder.on_event(item);
    }
    builder.finish();
  } catch (const std::bad_alloc&) {
    throw InputError(name, item.offset,
                     fmt::format("out of memory after {} events; profile fewer steps or pass a smaller --max-events",
                                 item.index));
  }
  trace.finalize();
  return trace;
}

}  // namespace

Trace read_chrome_json(const std::string& path, const ReadOptions& opts) {
  auto src = prefetched(open_byte_source(path));   // reading and inflating on a second core
  return read_source(*src, path, opts);
}

Trace read_chrome_json_buffer(std::string_view json, const std::string& name, const ReadOptions& opts) {
  auto src = memory_byte_source(json, name);
  return read_source(*src, name, opts);
}

}  // namespace npud
