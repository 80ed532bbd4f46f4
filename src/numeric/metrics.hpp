// The comparison metrics of docs/metrics.md, computed over two tensors' elements in
// float64, multi-threaded. Results do not depend on the thread count: elements are cut into
// fixed-size chunks, each chunk is summed in a fixed order, and the chunks' partial results
// are combined in chunk order.
#pragma once

#include <cstdint>
#include <functional>

#include "model/tensor_metrics.hpp"
#include "numeric/tensor_view.hpp"

namespace npud {

struct MetricsOptions {
  unsigned threads = 0;  // 0 = hardware concurrency
  // Called now and then from the calling thread with elements done so far (progress).
  std::function<void(uint64_t done)> on_progress;
  bool allow_avx2 = true;  // false: the SSE2 kernel even where AVX2 exists (same results; tests)
};

// ref and target must hold the same number of elements (the caller checks shapes).
TensorMetrics compute_metrics(const TensorView& ref, const TensorView& target, const MetricsOptions& opts = {});

}  // namespace npud
