// Tensor shapes of a device task as torch_npu's kernel_details.csv (msprof op_summary) writes
// them: "8192,15365;8192,4096", ';' between tensors, nothing between two ';' for an absent
// tensor. Shared by the advisor-parity rules (SHAPE001, SHAPE002, FUSE010).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npud {

class Trace;
struct Kernel;
struct KernelDetail;

using KernelShape = std::vector<int64_t>;   // empty: the tensor is absent

// Every tensor's dims, or nothing when a dim is not a non-negative integer.
std::optional<std::vector<KernelShape>> parse_kernel_shapes(std::string_view text);

// The kernel's kernel_details row, or nullptr.
const KernelDetail* detail_of(const Trace& t, const Kernel& k);

// "DT_BF16;DT_BF16;INT64" -> "DT_BF16, INT64": each dtype once, for messages.
std::string distinct_items(std::string_view list);

// "[8192, 15365], [8192, 4096]" for messages.
std::string shapes_text(const std::vector<KernelShape>& shapes);

// Device tasks of one op with one set of shapes: the unit the advisor judges and lists.
struct KernelShapeGroup {
  std::string op;                          // kernel name without its instance suffix
  std::string_view op_type, input_shapes, output_shapes, dtypes;   // as written
  std::string_view first_name;             // one kernel's full name (FlashAttention "varlen" in it)
  size_t count = 0;
  int64_t time_ns = 0;
};

// Kernels with a kernel_details row that `keep` accepts, grouped by (op, input shapes, output
// shapes) in first-seen order.
std::vector<KernelShapeGroup> group_by_shape(const Trace& t,
                                             const std::function<bool(const Kernel&, const KernelDetail&)>& keep);

}  // namespace npud
