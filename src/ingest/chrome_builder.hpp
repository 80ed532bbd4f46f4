// The state of one Chrome Trace Event JSON read (internal to ingest/). The stream splitter
// (json_stream) hands over one event at a time; parse_event (chrome_fields) decodes it with
// simdjson On-Demand; ChromeBuilder maps the decoded fields onto the event model. Its methods
// live by dialect:
//   chrome_events.cpp      shared plumbing: the "ph" switch, categories -> ops/kernels/runtime
//                          calls, ids, B/E pairing, limits
//   chrome_finish.cpp      after the last event: warnings, times relative to the earliest event
//   kineto_events.cpp      Kineto / torch.profiler: input shapes and types, call stacks,
//                          top-level keys
//   trace_view_events.cpp  torch_npu trace_view.json: events without "cat", decided by process
//   capture_events.cpp     the npu-doctor capture and amp-check records
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ingest/amp_fields.hpp"
#include "ingest/chrome_fields.hpp"
#include "ingest/json_stream.hpp"
#include "ingest/npu_launch_links.hpp"
#include "model/trace.hpp"

namespace npud::chrome {

namespace od = simdjson::ondemand;

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

  // Reserves for a trace of about `bytes` of JSON (chrome_events.cpp).
  void reserve(uint64_t bytes);
  void on_event(const JsonEventStream::Item& it);
  void on_top_value(const JsonEventStream::Item& it);
  void finish();

 private:
  enum Which : uint8_t { kOp, kKernel, kRuntime, kStep, kDeferred, kNothing };
  struct Ref {
    Which which = kNothing;
    uint32_t index = 0;
  };

  // chrome_events.cpp: shared event plumbing
  Ref complete(uint64_t offset);
  void instant();
  void metadata(uint64_t offset);
  int32_t pid32();
  int32_t tid32();
  uint32_t frame(std::string_view file, int32_t line, std::string_view func);
  int64_t* start_of(Ref r);
  int64_t* dur_of(Ref r);
  TaskKind kernel_kind(StrId name);
  RuntimeCall runtime_call(StrId recorded);
  DType dtype_of(StrId spelling);
  void skip(uint64_t offset);
  void check_time_range(const JsonEventStream::Item& it);
  bool shape_ok(const int64_t* dims, size_t rank);

  // kineto_events.cpp: Kineto / torch.profiler
  void add_kineto_inputs(Op& op);
  uint32_t legacy_stack(std::string_view text, bool enclosing = false);
  uint32_t python_function_frame(std::string_view name);

  // trace_view_events.cpp: torch_npu trace_view.json
  void process_name();
  Ref defer(int64_t dur);
  void resolve_deferred();

  // capture_events.cpp: the npu-doctor capture (docs/formats/capture.md, amp.md)
  void capture_metadata(uint64_t offset);
  void capture_error();
  void add_capture_op_fields(Op& op);
  void amp_record();
  void add_capture_tensors(const std::vector<CaptureTensor>& ts, uint32_t& begin, uint32_t& count);
  void read_string_map(std::string_view raw, std::string_view prefix, size_t most);
  void read_compile(std::string_view raw);
  void read_model_facts(std::string_view raw);
  uint32_t capture_stack(std::string_view raw);
  void count_unended_steps();
  void step_numbers_to_indexes();

  Trace& t_;
  JsonEventStream& stream_;
  const std::string& file_;
  NpuLaunchLinks npu_links_;   // torch_npu async_npu flows: device task -> launching op
  od::parser parser_;
  od::parser aux_parser_;
  EventFields ev_;
  AmpFieldReader amp_;

  bool is_capture_ = false;
  // Capture ops' step numbers, (op index, number), until finish() sets their step_index.
  std::vector<std::pair<uint32_t, int32_t>> op_step_numbers_;
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
  struct RuntimeNameOf {           // a recorded runtime call name's canonical form
    StrId name = 0;
    RuntimeApi api = RuntimeApi::Other;
    RuntimeKind kind = RuntimeKind::Other;
    bool known = false;
  };
  std::vector<RuntimeNameOf> runtime_names_;   // by the recorded name's StrId
  std::vector<int8_t> dtype_cache_;
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

}  // namespace npud::chrome
