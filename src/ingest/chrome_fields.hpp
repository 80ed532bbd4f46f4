// One Chrome trace event, decoded from its JSON text into plain fields (no Trace yet).
// Field order in events varies between writers ("args" may come before "ph" or "cat"),
// so everything the importer may need is decoded first and interpreted afterwards.
// The string_views point into the event buffer or the parser's string buffer: valid
// until the next event is parsed. All vectors are reused, so steady state allocates nothing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

namespace npud {

// Kineto "Input Dims" / "Input Strides": per input, [] (no tensor or a 0-d tensor), a list
// of ints (a tensor), or a list of lists (a tensor list).
struct NestedInts {
  struct Entry {
    enum Kind : uint8_t { NotList, Ints, Lists } kind = NotList;
    uint32_t begin = 0;  // Ints: into ints; Lists: into lists
    uint32_t count = 0;
  };
  bool present = false;
  std::vector<Entry> top;
  std::vector<Entry> lists;  // elements of a list of lists (kind Ints or NotList)
  std::vector<int64_t> ints;
  void clear() {
    present = false;
    top.clear();
    lists.clear();
    ints.clear();
  }
};

// A tensor of a capture event's "inputs"/"outputs".
struct CaptureTensor {
  int64_t id = -1, storage = -1, offset = 0;
  std::string_view dtype, device, layout;
  uint32_t shape_begin = 0, shape_count = 0, strides_begin = 0, strides_count = 0;
  bool has_shape = false, has_strides = false;
  bool requires_grad = false;
};

// amp-check keys (docs/formats/amp.md). Their values are kept as raw JSON text and only
// interpreted (strictly, by ingest/amp_fields) for capture events of the right kind: other
// traces may use the same key names for other things.
enum AmpKey : uint8_t {
  kAmpNumeric, kAmpHeader /* "amp" */, kAmpMode, kAmpParams, kAmpElements, kAmpZero, kAmpNonfinite,
  kAmpUnderflow, kAmpOverflow, kAmpLog2Min, kAmpLog2Hist, kAmpScaled, kAmpLossScale, kAmpScale, kAmpDtype,
  kAmpKeyCount
};

struct EventFields {
  char ph = 0;
  std::string_view cat, name;
  bool has_cat = false;
  int64_t pid = 0, tid = 0;
  std::string_view pid_str, tid_str;  // when given as strings ("Spans", "PyTorch Profiler")
  int64_t ts_ns = 0, dur_ns = 0;
  bool has_ts = false, has_dur = false;
  int64_t flow_id = -1;               // flow events' "id" when it is a non-negative integer

  // args
  int64_t external_id = -1, correlation = -1, sequence = -1, bytes = -1, device = -1, stream = -1;
  int64_t step = -1, total_allocated = -1, total_reserved = -1, mem_bytes = 0;
  bool has_mem_bytes = false;
  double mhz = -1;                    // "AI Core Freq" counter events (torch_npu trace_view): MHz
  std::string_view sync_kind, task_type, call_stack, module, reason, message, arg_name, copy_kind;
  // Kineto's collective kernels (torch >= 2.2): "Process Group Name" / "Process Group Ranks"
  std::string_view pg_name, pg_ranks;
  std::string_view stack_raw;  // capture "stack": raw JSON array
  std::string_view bwd;        // capture "bwd": the forward op of a backward-pass op
  bool has_bwd = false;
  NestedInts dims, strides;
  std::vector<std::string_view> types;
  bool has_types = false;
  std::vector<CaptureTensor> inputs, outputs;
  std::vector<int64_t> tensor_ints;
  bool has_inputs = false, has_outputs = false;
  // capture header ("npu_doctor" metadata event)
  std::string_view format, torch, python, device_str, torch_npu, steps;
  int64_t capture_version = -1;
  int64_t capture_rank = -1, capture_world_size = -1;   // a capture header's RANK / WORLD_SIZE
  // capture status and facts ("npu_doctor_end", "npu_doctor_error", "npu_doctor_op" events)
  std::string_view op, thread, where, dispatch, cwd;
  std::string_view packages_raw;   // "npu_doctor_packages": {"transformers": "5.17.0", ...} as raw JSON
  std::string_view compile_raw;    // "npu_doctor_compile": {"kind": "graph_break", ...} as raw JSON
  std::string_view facts_raw;      // "npu_doctor_model": {"path": "model", "class": ..., ...} as raw JSON
  int64_t steps_completed = -1;
  bool cpu_kernel = false, expanded = false;
  std::string argv;
  std::string_view amp[kAmpKeyCount];   // raw JSON values, empty when absent
  bool has_amp = false;

  void reset();
};

// Parses the event at data[0, len) (data[len, len + SIMDJSON_PADDING) readable) into ev.
// Throws InputError(file, offset of the problem, message) for malformed events.
void parse_event(simdjson::ondemand::parser& parser, const char* data, size_t len, uint64_t offset,
                 uint64_t index, const std::string& file, EventFields& ev);

}  // namespace npud
