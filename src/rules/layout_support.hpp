// Tensor layouts as an NPU would have them (CONTIG001, CONTIG002). A capture records the strides
// the CPU kernels left; an NPU op leaves others: op-plugin's out-of-place ops allocate a new
// output of the output size (`apply_tensor_without_format`, e.g. AddKernelNpuOpApi.cpp's add), so
// a layout a CPU kernel carries over from a strided input (TensorIterator keeps a channels-last-like
// layout through `hidden + residual`) never reaches the next op on the NPU. Only views (and
// in-place results on them) of what the last computing op made are strided there.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "model/trace.hpp"

namespace npud {

// Views: their output aliases their input (permute, transpose, slice, view, expand...).
bool is_view_op(std::string_view base);

// The first input of ops[op], or nullptr.
const TensorMeta* first_input(const Trace& t, uint32_t op);

// Tensor id -> the op that last produced it, kept while walking the ops in trace order.
class TensorProducers {
 public:
  void record(const Trace& t, uint32_t op);   // ops[op]'s outputs were made by it
  uint32_t of(const TensorMeta& m) const;     // kNone when unknown
 private:
  std::unordered_map<int64_t, uint32_t> map_;
};

// Whether `m` (a tensor strided in the capture) is strided on an NPU too: a view, or an in-place
// op's result on one, of what the last computing op made; or made before the ops recorded (an
// input, a parameter: as the capture saw it).
bool strided_on_npu(const Trace& t, const TensorProducers& producers, const TensorMeta& m);

}  // namespace npud
