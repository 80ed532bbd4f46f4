// libFuzzer harness: arbitrary bytes as a torch.save .pt file through parse_pt (stored zip,
// restricted pickle VM, storage bounds); when they parse, each tensor is viewed (strided views
// gathered) and measured against itself.
// fuzz-seeds: *.pt
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/input_error.hpp"
#include "numeric/metrics.hpp"
#include "numeric/pt.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    npud::PtContents c = npud::parse_pt(bytes, "fuzz.pt");
    for (size_t i = 0; i < c.tensors.size() && i < 64; ++i) {
      // A stride-0 view may claim 1 GiB; the fuzzer's inputs are small, its memory is not.
      if (!c.tensors[i].contiguous() && c.tensors[i].count > (uint64_t(1) << 24)) continue;
      std::vector<char> copy;
      npud::TensorView v = npud::pt_view(bytes, c, i, copy, "fuzz.pt");
      npud::MetricsOptions opts;
      opts.threads = 1;
      npud::compute_metrics(v, v, opts);
    }
  } catch (const npud::InputError&) {
  }
  return 0;
}
