// The cost model findings are ranked by (docs/cost-model.md): what one occurrence of a problem
// costs on an Ascend NPU. An NPU profile measures device and host time, and rules read them;
// a capture runs on another device (often the CPU) and can only count occurrences, which
// these estimates price. They are round figures for a current Ascend part, stated so that a
// reader can disagree with a number instead of with a hidden order.
#pragma once

#include <cstdint>

namespace npud::cost {

// One device task launch as the host sees it (torch_npu task queue, aclnn launch).
inline constexpr double kLaunchNs = 5'000;
// Device memory traffic of an element-wise or copy task (reads and writes, HBM, effective).
inline constexpr double kDeviceBytesPerNs = 200.0;
// One host-device sync: the task queue drains, the value crosses the link, and the device
// idles until the host has queued work again.
inline constexpr double kSyncNs = 50'000;
// Host-device link (PCIe 4.0 x16 effective) for the copies a CPU fallback makes.
inline constexpr double kLinkBytesPerNs = 20.0;
// One AI-CPU task (float64 compute, int sorts...): slow cores plus their scheduling.
inline constexpr double kAiCpuTaskNs = 30'000;
// An op shape the device has not seen: compile or re-tile a kernel once.
inline constexpr double kNewShapeNs = 1'000'000;

// Strided tensors made contiguous: one copy task each, reading and writing `bytes` in all.
inline double copies_ns(double copies, double bytes) { return copies * kLaunchNs + 2.0 * bytes / kDeviceBytesPerNs; }

}  // namespace npud::cost
