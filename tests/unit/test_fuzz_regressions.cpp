// Replays the fuzzers' past findings and hand-made hostile inputs (deep nesting, cut lines,
// wrong types, huge numbers, invalid UTF-8: tests/regression/<reader>/*) through their readers:
// each input must read or end in an InputError, never another exception (ASan/UBSan catch
// the rest in the sanitizer build).
#include <gtest/gtest.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>
#include "file_text.hpp"
#include "ingest/ascend.hpp"
#include "ingest/chrome_json.hpp"
#include "util/input_error.hpp"
#include "numeric/dump.hpp"
#include "source/scanner.hpp"

namespace fs = std::filesystem;
using namespace npud;

namespace {
const fs::path kRegressionDir = fs::path(NPUD_SOURCE_DIR) / "tests" / "regression";

std::vector<fs::path> inputs_of(const std::string& reader) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kRegressionDir / reader, ec))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs read() on each input of `reader`; an InputError is a fine outcome, anything else fails.
template <class Read>
void replay(const std::string& reader, Read read) {
  const std::vector<fs::path> inputs = inputs_of(reader);
  ASSERT_FALSE(inputs.empty()) << "no inputs in " << (kRegressionDir / reader) << ": a replay of nothing tests nothing";
  for (const fs::path& p : inputs) {
    SCOPED_TRACE(p.string());
    try {
      read(p);
    } catch (const InputError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "non-InputError exception: " << e.what();
    }
  }
}
}  // namespace

TEST(FuzzRegressions, ChromeJson) {
  replay("chrome_json", [](const fs::path& p) { read_chrome_json_buffer(test::file_text(p), p.string(), ReadOptions{}); });
}

TEST(FuzzRegressions, Capture) {
  ReadOptions opts;
  opts.allow_truncated = true;
  replay("capture", [&](const fs::path& p) { read_chrome_json_buffer(test::file_text(p), p.string(), opts); });
}

TEST(FuzzRegressions, DumpJson) {
  replay("dump_json", [](const fs::path& p) {
    std::string text = test::file_text(p);
    for (auto parse : {parse_index_jsonl, parse_msprobe_json, parse_msprobe_stack}) {
      try {
        Dump d;
        parse(text, p.string(), d);
      } catch (const InputError&) {
      }
    }
  });
}

TEST(FuzzRegressions, KernelDetails) {
  replay("kernel_details", [](const fs::path& p) { read_ascend(p.string(), ReadOptions{}); });
}

TEST(FuzzRegressions, PythonScan) {
  if (!scan_available()) GTEST_SKIP() << "built without tree-sitter (NPUD_SCAN off): no scan to replay";
  ScanOptions opts;
  opts.threads = 1;
  replay("python_scan", [&](const fs::path& p) { scan_source(p.string(), test::file_text(p), opts); });
}
