// The pickle (data.pkl) inside a torch.save zip archive, read by a restricted pickle VM that
// never imports or calls anything: it knows the opcodes torch writes for tensors and
// containers (protocols 2-5) and the few names torch pickles for them
// (docs/formats/dump.md, "PyTorch .pt files"):
//   torch._utils._rebuild_tensor_v2 / _rebuild_tensor_v3 / _rebuild_parameter,
//   torch_npu.utils.storage._rebuild_npu_tensor and torch_npu.npu._format.Format (a tensor
//   saved on an Ascend NPU: its CPU copy's storage and the NPU format, an int),
//   collections.OrderedDict (called with no arguments: the empty backward-hooks dict),
//   torch.<X>Storage for the compared dtypes, torch.storage.UntypedStorage, torch.<dtype>
//   (complex and float8 ones too: such tensors are read but marked uncompared_dtype),
// and storages as BINPERSID ('storage', class, key, location, numel) tuples. Any other name,
// a call of anything but those rebuild functions, or any other opcode is refused with the
// byte offset: nothing in the file is run.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "numeric/tensor_view.hpp"

namespace npud {

// Bounds against hostile pickles (a real state_dict of 100k tensors is ~30 objects each).
inline constexpr uint64_t kMaxPickleObjects = uint64_t(1) << 23;  // values created, memo slots
inline constexpr uint64_t kMaxPickleStackPushes = kMaxPickleObjects * 4;  // bounds stack + container items
inline constexpr int kMaxPickleDepth = 64;                        // container nesting
inline constexpr uint64_t kMaxPickledTensors = uint64_t(1) << 20;  // tensors reached in the saved object
inline constexpr uint64_t kMaxTensorNameBytes = 4096;             // one tensor's name ("a.b.c")
inline constexpr uint64_t kMaxTensorNamesBytes = uint64_t(1) << 26;  // all names together
inline constexpr int kMaxTensorDims = 64;

struct PickledTensor {
  std::string name;            // its place in the saved object: "" for a lone tensor, "fc1.weight", "0", "a.b"
  DType dtype = DType::F32;
  std::string uncompared_dtype;  // set for a dtype compare does not measure (complex, float8): dtype is then moot
  uint64_t element_bytes = 4;
  std::string storage_key;     // the archive's data/<key>
  uint64_t storage_bytes = 0;  // what the pickle says the storage holds
  uint64_t storage_offset = 0; // elements
  std::vector<int64_t> shape, stride;
  uint64_t count = 0;          // elements (product of shape)
  uint64_t span_bytes = 0;     // bytes of the storage the view reaches (0 when count is 0)
  uint64_t at = 0;             // byte of data.pkl where the tensor is rebuilt
  bool contiguous() const;     // C-contiguous strides (dimensions of size 1 ignored)
};

struct TorchPickle {
  std::vector<PickledTensor> tensors;  // in the order they appear in the saved object
  uint64_t other_values = 0;           // numbers, strings, None beside the tensors (not compared)
};

// Reads `data_pkl`. Errors are InputErrors naming `name` at byte `base` + the pickle
// offset (base: where data.pkl starts in the file), the message saying what was found.
TorchPickle read_torch_pickle(std::string_view data_pkl, const std::string& name, uint64_t base = 0);

}  // namespace npud
