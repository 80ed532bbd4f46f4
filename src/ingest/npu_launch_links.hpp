// torch_npu's trace_view.json ties each device task to the host op that launched it with an
// `async_npu` flow ("torch_to_npu"): its 's' end lies inside the op on the Python thread, its
// 'f' end at the task's start on the device. Kineto traces do the same with "External id"
// args; this turns the flows into those ids so every analysis finds a task's op one way.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "model/trace.hpp"

namespace npud {

class NpuLaunchLinks {
 public:
  // One end of an async_npu flow (`ph` 's' or 'f'); times absolute, as read.
  void add(char ph, int64_t id, int32_t pid, int32_t tid, int64_t ts_ns);
  // Gives each task whose flow ends at its start the external id of the innermost op around
  // the flow's start (a fresh id when the op has none). Call once the events are read, while
  // times are still absolute. Returns how many tasks were linked.
  size_t apply(Trace& t) const;

 private:
  struct End {
    int32_t pid = 0, tid = 0;
    int64_t ts = 0;
    bool set = false;
  };
  std::unordered_map<int64_t, std::pair<End, End>> flows_;  // id -> (start, finish)
};

}  // namespace npud
