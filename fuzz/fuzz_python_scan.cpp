// libFuzzer harness: the static scan of one Python file's text (UTF-8 and NUL checks,
// tree-sitter parse, all source rules). It must never throw for any text.
// fuzz-seeds: *.py
#include <cstddef>
#include <cstdint>
#include <string>
#include "source/scanner.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npud::ScanOptions opts;
  opts.threads = 1;
  npud::scan_source("fuzz.py", std::string(reinterpret_cast<const char*>(data), size), opts);
  return 0;
}
