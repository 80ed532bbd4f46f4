// libFuzzer harness: the static scan on machine-made depth and length (issue 31 F-10/F-11).
// Random Python text rarely nests deeper than a few levels, so fuzz_python_scan never builds
// `a + a + ...` 40,000 long; this harness reads the bytes as a recipe instead: a statement
// shape, a repeat count up to 60,000, and the pieces to repeat (operators, brackets, calls,
// subscripts, unary chains, chained assignments, string concatenations). The scan must never
// throw, crash, overflow the stack or take quadratic time (libFuzzer's -timeout catches that),
// and a file carries at most one PARSE001. Seeds: fuzz/corpus/fuzz_scan_depth/ (the repro's
// shapes as recipes); no "fuzz-seeds" line, the repo's files are not recipes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "source/scanner.hpp"

namespace {

// One link of a chain: what goes before the operand and what closes it after.
struct Link {
  std::string_view open, close;
};
constexpr Link kLinks[] = {
    {"a + ", ""},       {"a * ", ""},        {"a and ", ""},      {"a or ", ""},         {"- ", ""},
    {"not ", ""},       {"(", ")"},          {"f(", ")"},         {"x[", "]"},           {"[", "]"},
    {"'cuda' + ", ""},  {"t.cuda(", ")"},    {"a if c else ", ""}, {"lambda: ", ""},     {"a ** ", ""},
    {"x.t().", ""},     {"{", "}"},          {"a < ", ""},        {"f'{", "}'"},         {"torch.", ""},
};
constexpr size_t kNumLinks = sizeof(kLinks) / sizeof(kLinks[0]);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  // Byte 0: chained assignment targets or not, and the line after; bytes 1-2: the repeat count.
  bool chained = data[0] & 1;
  size_t count = (size_t(data[1]) << 8 | data[2]) % 60000 + 1;
  std::string_view recipe(reinterpret_cast<const char*>(data + 3), size - 3);
  std::string text = "import torch\n", closes;
  if (chained)
    for (size_t i = 0; i < count; ++i) text += "v" + std::to_string(i) + " = ";
  else
    text += "v = ";
  for (size_t i = 0; i < count; ++i) {
    const Link& l = kLinks[recipe.empty() ? i % kNumLinks : uint8_t(recipe[i % recipe.size()]) % kNumLinks];
    text += l.open;
    closes.insert(0, l.close);
  }
  text += "a" + closes + "\ndevice = torch.device('cuda')\n";
  npud::ScanOptions opts;
  opts.threads = 1;
  npud::FileResult r = npud::scan_source("depth.py", std::move(text), opts);
  size_t parse = 0;
  for (const auto& f : r.findings) parse += f.rule == "PARSE001";
  if (r.status != npud::FileStatus::Scanned || parse > 1) std::abort();
  return 0;
}
