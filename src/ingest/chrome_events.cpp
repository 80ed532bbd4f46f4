// Chrome trace events -> the event model, the plumbing every dialect shares: the "ph" switch,
// categories to ops, kernels and runtime calls, B/E pairing, pid/tid, frames and the limits
// of ingest/limits.hpp. What only one dialect has lives in kineto_events.cpp,
// trace_view_events.cpp and capture_events.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "ingest/chrome_builder.hpp"
#include "ingest/chrome_categories.hpp"
#include "ingest/huge_pages.hpp"
#include "util/input_error.hpp"
#include "ingest/limits.hpp"
#include "util/text.hpp"

namespace npud::chrome {

namespace {

bool parse_step_name(std::string_view name, int64_t& number) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!name.starts_with(kPrefix)) return false;
  name.remove_prefix(kPrefix.size());
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), number);
  return ec == std::errc() && p == name.data() + name.size();
}

}  // namespace

// Unused capacity is address space only (pages are touched when filled), so erring high costs
// no resident memory while it saves the copies and the double peak of vector growth.
void ChromeBuilder::reserve(uint64_t bytes) {
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

// A runtime call of this recorded name: its API name without a vendor prefix, its runtime and
// kind, worked out once per distinct name.
RuntimeCall ChromeBuilder::runtime_call(StrId recorded) {
  if (recorded >= runtime_names_.size()) runtime_names_.resize(t_.strings.size() + 1024);
  if (!runtime_names_[recorded].known) {
    RuntimeName n = classify_runtime(t_.str(recorded));
    StrId name = n.name.size() == t_.str(recorded).size() ? recorded : t_.intern(n.name);
    runtime_names_[recorded] = {name, n.api, n.kind, true};
  }
  const RuntimeNameOf& c = runtime_names_[recorded];
  RuntimeCall r;
  r.name = c.name;
  r.api = c.api;
  r.kind = c.kind;
  return r;
}

// Each dtype spelling is parsed once per read.
DType ChromeBuilder::dtype_of(StrId spelling) {
  if (spelling >= dtype_cache_.size()) dtype_cache_.resize(t_.strings.size() + 1024, -1);
  int8_t& d = dtype_cache_[spelling];
  if (d < 0) d = int8_t(parse_dtype(t_.str(spelling)));
  return DType(d);
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
      if (is_capture_) add_capture_op_fields(op);
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
      if (!ev_.pg_name.empty() || !ev_.pg_ranks.empty())
        k.group = ev_.pg_ranks.empty() ? t_.intern(ev_.pg_name) : t_.intern(fmt::format("{} {}", ev_.pg_name, ev_.pg_ranks));
      if (cat == Cat::Memcpy || cat == Cat::Memset) k.bytes = ev_.bytes;
      if (cat != Cat::DeviceOther) saw_gpu_ = true;
      t_.kernels.push_back(k);
      return {kKernel, uint32_t(t_.kernels.size() - 1)};
    }
    case Cat::Runtime: {
      RuntimeCall r = runtime_call(t_.intern(ev_.name));
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
    case Cat::None:
      return defer(dur);
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
    capture_error();
  }
}

void ChromeBuilder::metadata(uint64_t offset) {
  if (ev_.name == "process_name") process_name();
  else capture_metadata(offset);
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

}  // namespace npud::chrome
