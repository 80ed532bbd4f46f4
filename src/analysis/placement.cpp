#include "analysis/placement.hpp"

#include <span>
#include <unordered_set>

#include "analysis/names.hpp"

namespace npud {
namespace {

// The capture's event for `Tensor.cpu()` (a python_sync event).
constexpr std::string_view kHostCopyEvent = "Tensor.cpu";

bool is_host_device(std::string_view d) { return d.empty() || d == "cpu" || d.starts_with("cpu:"); }

// Random draws made from nothing (torch.rand([]) of BART's LayerDrop) stay on the host unless the
// code names a device, which model code rarely does for them: only the other factories count.
bool draws_random(const Trace& t, const Op& op) {
  std::string_view name = t.str(op.name);
  return name.find("::rand") != std::string_view::npos || name.find("::bernoulli") != std::string_view::npos ||
         name.find("::normal") != std::string_view::npos || name.find("::multinomial") != std::string_view::npos;
}

// An in-place copy (`dst.copy_(src)`) whose destination is host data: it stays host data.
template <typename OnDevice>
bool copies_into_host(const Trace& t, const Op& op, std::span<const uint32_t> in, const OnDevice& on_device) {
  return !in.empty() && aten_base(t.str(op.name)) == "copy_" && t.tensors[in[0]].is_tensor && !on_device(in[0]);
}

}  // namespace

Placement::Placement(const Trace& t) {
  if (!t.caps.dispatched_ops) return;
  host_only_.assign(t.ops.size(), 0);
  already_placed_.assign(t.ops.size(), 0);
  // A capture run on an accelerator: the tensors' own devices tell.
  const bool host_run = is_host_device(t.env_value("device"));
  std::unordered_set<int64_t> device_storages;   // storage ids holding device data
  // Storages a `.cpu()` copied to the host: on the CPU `.cpu()` returns the tensor itself, on a
  // device its result is a host copy, so what reads it next (pairs[0].tolist() after
  // pairs = x.cpu()) reads host data, until device work uses the tensor again.
  std::unordered_set<int64_t> host_copies;
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
    bool placed = op.kind == OpKind::Placement;
    if (placed) {
      // the moved tensor is device data from here on (older captures record only it, as input)
      already_placed_[i] = any_tensor && any_device;
      for (auto refs : {in, t.outputs(op)})
        for (uint32_t r : refs)
          if (t.tensors[r].storage != kUnset) device_storages.insert(t.tensors[r].storage);
    } else if (host_run && op.kind == OpKind::PythonSync && any_device && t.str(op.name) == kHostCopyEvent) {
      for (uint32_t r : in)
        if (int64_t s = t.tensors[r].storage; s != kUnset && device_storages.erase(s)) host_copies.insert(s);
    } else if (op.kind == OpKind::Aten && copies_into_host(t, op, in, on_device)) {
      // `host[k] = value` (a copy_ into a host tensor): the destination stays on the host
      // whatever the source (nanoGPT's eval `losses[k] = loss.item()`; on torch 1.x the scalar's
      // wrapper tensor may even sit at a freed device tensor's address).
    } else if (op.kind == OpKind::Aten && (any_device || (!any_tensor && op.module && !draws_random(t, op)))) {
      if (any_device && !host_copies.empty())   // used with device data again: the device tensor, not its copy
        for (uint32_t r : in)
          if (int64_t s = t.tensors[r].storage; s != kUnset && host_copies.erase(s)) device_storages.insert(s);
      // What device data computes is device data; so is what a factory makes inside a module's
      // forward: model code makes its tensors on its inputs' device (`torch.arange(n,
      // device=x.device)`, transformers' position_ids), which a CPU run records as "cpu".
      for (uint32_t r : t.outputs(op))
        if (t.tensors[r].storage != kUnset) device_storages.insert(t.tensors[r].storage);
    }
  }
}

}  // namespace npud
