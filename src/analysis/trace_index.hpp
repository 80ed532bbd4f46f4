// Derived indexes over a finalized Trace that several rules need: which host op launched
// a kernel (external id / correlation), which op encloses a timestamp on a thread, the main
// host thread, device busy intervals, and per-step normalisation. Built once per rule run;
// cost is linear in the trace.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/intervals.hpp"
#include "analysis/source_sites.hpp"
#include "model/trace.hpp"

namespace npud {

class TraceIndex {
 public:
  explicit TraceIndex(const Trace& trace);

  const Trace& trace() const { return t_; }

  // Innermost op on (pid, tid) whose range contains [ts, ts + dur), or kNone.
  uint32_t enclosing_op(int32_t pid, int32_t tid, int64_t ts, int64_t dur = 0) const;
  // The host op a kernel belongs to: by external id, else through its runtime call
  // (correlation), else kNone.
  uint32_t op_of_kernel(const Kernel& k) const;
  // The runtime call that launched a kernel (correlation), or kNone.
  uint32_t runtime_of_kernel(const Kernel& k) const;
  // The innermost op enclosing a runtime call: by external id, else by time on its thread.
  uint32_t op_of_runtime(const RuntimeCall& r) const;

  // Walks up consecutive Aten parents: the outermost aten op of the call this op belongs to.
  uint32_t top_aten(uint32_t op) const;
  // A capture's kernel op recorded inside a CompositeExplicitAutograd op (docs/formats/capture.md):
  // it tells FALLBACK002 what the composite calls, but on an NPU with its own kernel for the
  // composite it never runs, so layout and shape rules judge the composite instead.
  bool inside_composite(uint32_t op) const;
  // First user frame of the op or of its nearest ancestor that has one, or nullptr.
  const Frame* user_frame(uint32_t op) const;
  // The frames (innermost first) of the op's stack or of its nearest ancestor's that has one.
  std::span<const uint32_t> stack_frames(uint32_t op) const;
  // The op whose stack stack_frames(op) is (op or an ancestor), or kNone.
  uint32_t stack_owner(uint32_t op) const;
  // Whose code each frame is: the program's own or an installed package's.
  const SourceSites& sites() const { return sites_; }
  // "file:line" of user_frame(op), or "".
  std::string user_location(uint32_t op) const;
  // Op and its ancestors, innermost first, at most `max` names joined by " < ".
  std::string parent_chain(uint32_t op, size_t max = 3) const;

  // The host thread that spends the most time in top-level ops.
  int32_t main_pid() const { return main_pid_; }
  int32_t main_tid() const { return main_tid_; }
  // [begin, end) of the ops of one thread in Trace::ops (ops are sorted per thread).
  std::pair<uint32_t, uint32_t> thread_ops(int32_t pid, int32_t tid) const;

  // Busy intervals of one device (all device work except sync records), merged.
  const std::vector<Interval>& device_busy(int32_t device) const;
  // Busy intervals of all devices together, merged.
  const std::vector<Interval>& all_busy() const { return all_busy_; }
  const std::vector<int32_t>& devices() const { return devices_; }
  // Sum over devices of their busy time (the denominator of "share of device time").
  int64_t device_busy_ns() const { return device_busy_sum_; }

  // Steps: count and total duration. Without steps the whole trace counts as one window.
  size_t step_count() const { return t_.steps.size(); }
  // Sum of step durations, or the trace span when there are no steps.
  int64_t wall_ns() const { return wall_ns_; }
  // Events per step: in-step events / steps when steps exist, else the total. A capture's step 0
  // is left out when later steps exist: it runs from the program's start to the first step end,
  // so it holds the start-up and lacks what the loop does after optimizer.step() (a sync there
  // lands in the next step); with it, rates and severities would depend on whether the
  // recording began at 0 (`--steps all`, issue 31 F-9). `in_first`: of in_steps, those in the
  // first step (Op::step_index == 0).
  double per_step(size_t in_steps, size_t in_first, size_t total) const;
  // The steps per_step() divides by.
  size_t rate_steps() const { return t_.steps.size() - (t_.startup_step_left_out() ? 1 : 0); }

 private:
  const Trace& t_;
  SourceSites sites_;
  std::unordered_map<int64_t, uint32_t> op_by_external_;
  std::unordered_map<int64_t, uint32_t> runtime_by_correlation_;
  struct ThreadRange { int32_t pid, tid; uint32_t begin, end; };
  std::vector<ThreadRange> threads_;
  int32_t main_pid_ = 0, main_tid_ = 0;
  std::vector<int32_t> devices_;
  std::vector<std::vector<Interval>> busy_per_device_;
  std::vector<Interval> all_busy_;
  int64_t device_busy_sum_ = 0;
  int64_t wall_ns_ = 0;
};

// Device work that occupies the device (not sync records).
bool is_busy_task(const Kernel& k);

}  // namespace npud
