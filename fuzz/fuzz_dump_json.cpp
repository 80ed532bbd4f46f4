// libFuzzer harness: arbitrary bytes through the dump index readers: npu-doctor's
// index.jsonl, msprobe's dump.json and its stack.json (docs/formats/dump.md). Each must
// read the bytes or throw InputError; paths that leave the dump directory must be refused.
// fuzz-seeds: index.jsonl dump.json stack.json construct.json
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "util/input_error.hpp"
#include "numeric/dump.hpp"

namespace {
// Whatever the reader accepted must be a relative path without '..'.
void check_files(const npud::Dump& d) {
  for (const auto& e : d.entries) {
    if (e.file.empty()) continue;
    try {
      npud::check_relative_path(e.file, "fuzz", 0);
    } catch (const npud::InputError&) {
      std::abort();
    }
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    npud::Dump d;
    npud::parse_index_jsonl(text, "index.jsonl", d);
    check_files(d);
  } catch (const npud::InputError&) {
  }
  try {
    npud::Dump d;
    npud::parse_msprobe_json(text, "dump.json", d);
    check_files(d);
    npud::parse_msprobe_stack(text, "stack.json", d);
  } catch (const npud::InputError&) {
  }
  return 0;
}
