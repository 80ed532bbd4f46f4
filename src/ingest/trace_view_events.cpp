// torch_npu's trace_view.json: device tasks (Ascend Hardware) and CANN / AscendCL calls come
// without "cat"; what each is depends on its process, named by "process_name" metadata that
// may come later in the file, so they wait in deferred_ until finish().
#include <limits>

#include "ingest/chrome_builder.hpp"

namespace npud::chrome {

namespace {

TaskKind ascend_task_kind(std::string_view t) {
  if (t == "AI_CPU") return TaskKind::AiCpu;
  if (t.find("HCCL") != t.npos || t.find("COMMUNICATION") != t.npos) return TaskKind::Communication;
  if (t.find("MEMCPY") != t.npos) return TaskKind::Memcpy;
  if (t == "EVENT_WAIT" || t == "NOTIFY_WAIT") return TaskKind::Sync;
  return TaskKind::Kernel;  // AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV, Other, ...
}

}  // namespace

// "process_name" metadata: the roles of torch_npu trace_view.json's processes.
void ChromeBuilder::process_name() {
  Role r = Role::Unknown;
  if (ev_.arg_name == "Python") r = Role::Python;
  else if (ev_.arg_name == "CANN") r = Role::Cann;
  else if (ev_.arg_name == "Ascend Hardware") r = Role::AscendHardware;
  else if (ev_.arg_name == "Overlap Analysis") r = Role::Overlap;
  else if (ev_.arg_name == "HCCL" || ev_.arg_name == "Communication") r = Role::Hccl;  // ingest/hccl_tasks.cpp
  if (r != Role::Unknown && ev_.pid_str.empty()) roles_[ev_.pid] = r;
  if (r == Role::Cann || r == Role::AscendHardware) t_.set_env("device", "npu");
}

// An event without "cat" (its duration clamped to >= 0): kept until finish(), when its
// process's role is known.
ChromeBuilder::Ref ChromeBuilder::defer(int64_t dur) {
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

// Events without "cat": torch_npu trace_view.json, classified by their process.
void ChromeBuilder::resolve_deferred() {
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
      RuntimeCall rc = runtime_call(d.name);
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
}

}  // namespace npud::chrome
