// What a Chrome trace event is, from its "cat" and name: the categories of Kineto, torch_npu and
// the npu-doctor capture, host runtime call kinds (CUDA, HIP, AscendCL) and copy directions.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/trace.hpp"

namespace npud::chrome {

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

Cat classify_cat(std::string_view c);

// A host runtime call's name as recorded, as the model keeps it (RuntimeCall): the API name
// without a vendor prefix ("AscendCL@aclrtMalloc" -> "aclrtMalloc"; name views `recorded`),
// whose runtime it is, and what it does.
struct RuntimeName {
  std::string_view name;
  RuntimeApi api = RuntimeApi::Other;
  RuntimeKind kind = RuntimeKind::Other;
};
RuntimeName classify_runtime(std::string_view recorded);
// From the event name or its "kind" argument ("Memcpy HtoD (Pageable -> Device)").
CopyDir copy_dir(std::string_view name, std::string_view kind);

}  // namespace npud::chrome
