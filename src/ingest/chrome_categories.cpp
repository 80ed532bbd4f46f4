// The "cat" strings of Kineto, torch_npu and the npu-doctor capture, and the host runtime call
// names, mapped onto the event model's kinds.
#include "ingest/chrome_categories.hpp"

namespace npud::chrome {

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

namespace {

// The vendor's prefix ("AscendCL" of torch_npu's "AscendCL@..."; "" none) says whose API it is,
// else the name's own prefix.
RuntimeApi runtime_api(std::string_view vendor, std::string_view n) {
  if (vendor == "AscendCL" || (vendor.empty() && n.starts_with("acl"))) return RuntimeApi::Acl;
  if (!vendor.empty()) return RuntimeApi::Other;
  if (n.starts_with("cuda")) return RuntimeApi::Cuda;
  if (n.size() > 2 && n.starts_with("cu") && n[2] >= 'A' && n[2] <= 'Z') return RuntimeApi::CudaDriver;
  if (n.starts_with("hip")) return RuntimeApi::Hip;
  return RuntimeApi::Other;
}

RuntimeKind runtime_kind(std::string_view n) {
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

}  // namespace

RuntimeName classify_runtime(std::string_view recorded) {
  std::string_view vendor, name = recorded;
  if (auto at = name.find('@'); at != std::string_view::npos) {
    vendor = name.substr(0, at);
    name.remove_prefix(at + 1);
  }
  return {name, runtime_api(vendor, name), runtime_kind(name)};
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

}  // namespace npud::chrome
