// libFuzzer harness: a lone torch_npu kernel_details.csv through read_ascend. The reader
// takes a path, so each input is written to a per-process temporary file first.
// fuzz-seeds: *.csv
#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include "ingest/ascend.hpp"
#include "util/input_error.hpp"

namespace {
const std::string& csv_path() {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string p = std::string(tmp && *tmp ? tmp : "/tmp") + "/npud_fuzz_" + std::to_string(getpid()) +
                    "_kernel_details.csv";
    return p;
  }();
  return path;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = csv_path();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  try {
    npud::read_ascend(path, npud::ReadOptions{});
  } catch (const npud::InputError&) {
  }
  std::remove(path.c_str());
  return 0;
}
