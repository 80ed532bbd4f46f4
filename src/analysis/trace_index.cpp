#include "analysis/trace_index.hpp"
#include "util/saturate.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace npud {

bool is_busy_task(const Kernel& k) { return k.kind != TaskKind::Sync && k.dur_ns > 0; }

TraceIndex::TraceIndex(const Trace& trace) : t_(trace), sites_(trace) {
  const auto& ops = t_.ops;
  std::map<std::pair<int32_t, int32_t>, int64_t> top_level_time;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.external_id != kUnset) op_by_external_.try_emplace(op.external_id, i);
    if (threads_.empty() || threads_.back().pid != op.pid || threads_.back().tid != op.tid)
      threads_.push_back({op.pid, op.tid, i, i + 1});
    else
      threads_.back().end = i + 1;
    if (op.parent == kNone && op.kind != OpKind::Other) add_saturating(top_level_time[{op.pid, op.tid}], op.dur_ns);
  }
  int64_t best = -1;
  for (const auto& [key, ns] : top_level_time)
    if (ns > best) { best = ns; main_pid_ = key.first; main_tid_ = key.second; }

  for (uint32_t i = 0; i < t_.runtime.size(); ++i)
    if (t_.runtime[i].correlation != kUnset) runtime_by_correlation_.try_emplace(t_.runtime[i].correlation, i);

  std::map<int32_t, std::vector<Interval>> per_device;
  std::vector<Interval> all;
  for (const Kernel& k : t_.kernels) {
    if (!is_busy_task(k)) continue;
    per_device[k.device].push_back({k.start_ns, k.start_ns + k.dur_ns});
    all.push_back({k.start_ns, k.start_ns + k.dur_ns});
  }
  for (auto& [dev, v] : per_device) {
    devices_.push_back(dev);
    busy_per_device_.push_back(union_of(std::move(v)));
    add_saturating(device_busy_sum_, total_length(busy_per_device_.back()));
  }
  all_busy_ = union_of(std::move(all));

  if (!t_.steps.empty()) {
    for (const Step& s : t_.steps) add_saturating(wall_ns_, s.dur_ns);
  } else {
    wall_ns_ = t_.span_ns();
  }
}

std::pair<uint32_t, uint32_t> TraceIndex::thread_ops(int32_t pid, int32_t tid) const {
  for (const auto& r : threads_)
    if (r.pid == pid && r.tid == tid) return {r.begin, r.end};
  return {0, 0};
}

uint32_t TraceIndex::enclosing_op(int32_t pid, int32_t tid, int64_t ts, int64_t dur) const {
  auto [begin, end] = thread_ops(pid, tid);
  if (begin == end) return kNone;
  const auto& ops = t_.ops;
  // Last op starting at or before ts: the innermost op containing ts is it or an ancestor.
  auto it = std::upper_bound(ops.begin() + begin, ops.begin() + end, ts,
                             [](int64_t t, const Op& op) { return t < op.start_ns; });
  if (it == ops.begin() + begin) return kNone;
  uint32_t i = uint32_t(it - ops.begin() - 1);
  while (i != kNone) {
    const Op& op = ops[i];
    if (op.start_ns <= ts && ts + dur <= op.start_ns + op.dur_ns) return i;
    i = op.parent;
  }
  return kNone;
}

uint32_t TraceIndex::runtime_of_kernel(const Kernel& k) const {
  if (k.correlation == kUnset) return kNone;
  auto it = runtime_by_correlation_.find(k.correlation);
  return it == runtime_by_correlation_.end() ? kNone : it->second;
}

uint32_t TraceIndex::op_of_runtime(const RuntimeCall& r) const {
  if (r.external_id != kUnset) {
    auto it = op_by_external_.find(r.external_id);
    if (it != op_by_external_.end()) return it->second;
  }
  return enclosing_op(r.pid, r.tid, r.start_ns, r.dur_ns);
}

uint32_t TraceIndex::op_of_kernel(const Kernel& k) const {
  if (k.external_id != kUnset) {
    auto it = op_by_external_.find(k.external_id);
    if (it != op_by_external_.end()) return it->second;
  }
  uint32_t r = runtime_of_kernel(k);
  return r == kNone ? kNone : op_of_runtime(t_.runtime[r]);
}

bool TraceIndex::inside_composite(uint32_t op) const {
  const Op& o = t_.ops[op];
  return t_.caps.dispatched_ops && o.parent != kNone && t_.ops[o.parent].kind == OpKind::Aten;
}

uint32_t TraceIndex::top_aten(uint32_t i) const {
  if (i == kNone) return kNone;
  while (t_.ops[i].parent != kNone && t_.ops[t_.ops[i].parent].kind == OpKind::Aten) i = t_.ops[i].parent;
  return i;
}

std::span<const uint32_t> TraceIndex::stack_frames(uint32_t i) const {
  uint32_t owner = stack_owner(i);
  return owner == kNone ? std::span<const uint32_t>{} : t_.frames_of(t_.ops[owner].stack);
}

uint32_t TraceIndex::stack_owner(uint32_t i) const {
  for (; i != kNone; i = t_.ops[i].parent)
    if (!t_.frames_of(t_.ops[i].stack).empty()) return i;
  return kNone;
}

const Frame* TraceIndex::user_frame(uint32_t i) const {
  for (; i != kNone; i = t_.ops[i].parent)
    if (const Frame* f = t_.user_frame(t_.ops[i])) return f;
  return nullptr;
}

std::string TraceIndex::user_location(uint32_t i) const {
  const Frame* f = user_frame(i);
  if (!f) return {};
  return f->line > 0 ? fmt::format("{}:{}", t_.str(f->file), f->line) : std::string(t_.str(f->file));
}

std::string TraceIndex::parent_chain(uint32_t i, size_t max) const {
  std::string out;
  for (size_t n = 0; i != kNone && n < max; i = t_.ops[i].parent, ++n) {
    if (!out.empty()) out += " < ";
    out += t_.str(t_.ops[i].name);
  }
  return out;
}

const std::vector<Interval>& TraceIndex::device_busy(int32_t device) const {
  static const std::vector<Interval> kEmpty;
  for (size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i] == device) return busy_per_device_[i];
  return kEmpty;
}

double TraceIndex::per_step(size_t in_steps, size_t in_first, size_t total) const {
  if (t_.steps.empty()) return double(total);
  if (t_.startup_step_left_out()) return double(in_steps - std::min(in_first, in_steps)) / double(t_.steps.size() - 1);
  return double(in_steps) / double(t_.steps.size());
}

}  // namespace npud
