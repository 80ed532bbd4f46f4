#include "analysis/placement.hpp"

#include <unordered_set>

namespace npud {
namespace {

bool is_host_device(std::string_view d) { return d.empty() || d == "cpu" || d.starts_with("cpu:"); }

}  // namespace

Placement::Placement(const Trace& t) {
  if (t.format != InputFormat::Capture) return;
  host_only_.assign(t.ops.size(), 0);
  // A capture run on an accelerator: the tensors' own devices tell.
  const bool host_run = is_host_device(t.env_value("device"));
  std::unordered_set<int64_t> device_storages;   // storage ids holding device data
  auto on_device = [&](uint32_t ref) {
    const TensorMeta& m = t.tensors[ref];
    if (!m.is_tensor) return false;
    if (!is_host_device(t.str(m.device))) return true;
    if (!host_run) return false;
    return m.requires_grad || (m.storage != kUnset && device_storages.contains(m.storage));
  };
  for (uint32_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    auto in = t.inputs(op);
    bool any_tensor = false, any_device = false;
    for (uint32_t r : in) {
      any_tensor = any_tensor || t.tensors[r].is_tensor;
      any_device = any_device || on_device(r);
    }
    host_only_[i] = any_tensor && !any_device;
    bool placed = op.kind == OpKind::Other && t.str(op.name) == kPlacementEvent;
    if (placed) {
      for (uint32_t r : in)
        if (t.tensors[r].storage != kUnset) device_storages.insert(t.tensors[r].storage);
    } else if (op.kind == OpKind::Aten && any_device) {
      for (uint32_t r : t.outputs(op))
        if (t.tensors[r].storage != kUnset) device_storages.insert(t.tensors[r].storage);
    }
  }
}

}  // namespace npud
