// libFuzzer harness, differential: the two gzip inflaters (isa-l where the build has it, and
// zlib, NPUD_GZIP=zlib) read the same bytes the same way: the same output, or both refuse.
// Without isa-l both sides are zlib and this is a plain robustness harness.
// fuzz-seeds:
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "ingest/byte_source.hpp"
#include "util/input_error.hpp"

namespace {

std::pair<bool, std::string> inflate_with(const char* inflater, std::string_view in) {
  ::setenv("NPUD_GZIP", inflater, 1);
  std::string out;
  try {
    auto src = npud::memory_byte_source(in, "fuzz.gz");
    char buf[1 << 14];
    for (size_t k; (k = src->read(buf, sizeof buf)) > 0 && out.size() < (size_t(16) << 20);) out.append(buf, k);
    return {true, out};
  } catch (const npud::InputError&) {
    return {false, {}};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto zlib = inflate_with("zlib", in);
  auto fast = inflate_with("", in);
  if (zlib.first != fast.first || zlib.second != fast.second) std::abort();
  return 0;
}
