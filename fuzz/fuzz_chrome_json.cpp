// libFuzzer harness: Chrome Trace Event JSON (Kineto, torch_npu trace_view.json) from memory,
// plain or gzip. Any exception other than InputError escapes and counts as a crash.
// fuzz-seeds: *.json *.json.gz
#include <cstddef>
#include <cstdint>
#include <string_view>
#include "ingest/chrome_json.hpp"
#include "util/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  try {
    npud::read_chrome_json_buffer(json, "fuzz.json", npud::ReadOptions{});
  } catch (const npud::InputError&) {
  }
  return 0;
}
