// libFuzzer harness: arbitrary bytes as a .npy file through parse_npy; when they parse, the
// data is measured against itself (every dtype's conversion, byte swapping, odd alignment).
// fuzz-seeds: *.npy
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/input_error.hpp"
#include "numeric/metrics.hpp"
#include "numeric/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    npud::NpyHeader h = npud::parse_npy(bytes, "fuzz.npy");
    npud::TensorView v{h.dtype, h.byte_swapped, data + h.data_offset, h.count};
    npud::MetricsOptions opts;
    opts.threads = 1;
    npud::compute_metrics(v, v, opts);
  } catch (const npud::InputError&) {
  }
  return 0;
}
