// libFuzzer harness: npu-doctor capture files (docs/formats/capture.md), which go through the
// Chrome JSON reader with allow_truncated (a killed program leaves a cut-off last event).
// fuzz-seeds: *.npud.json *.json
#include <cstddef>
#include <cstdint>
#include <string_view>
#include "ingest/chrome_json.hpp"
#include "util/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  npud::ReadOptions opts;
  opts.allow_truncated = true;
  try {
    npud::read_chrome_json_buffer(json, "fuzz.npud.json", opts);
  } catch (const npud::InputError&) {
  }
  return 0;
}
