// Each reader's normalised trace, whole: one input per reader (Kineto from CUDA, ROCm and a
// legacy call stack, NCCL process groups, captures and amp-check captures, torch_npu's
// trace_view.json, kernel_details.csv and a profiler directory) dumped with dump_trace
// (model/trace_dump.hpp) and compared with tests/data/importer_dumps/<name>.txt. A reader
// change shows up as a diff of the table it moved. NPUD_UPDATE_GOLDEN=1 rewrites the files
// (then read the diff: each changed line is a changed field of the event model).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "file_text.hpp"
#include "ingest/reader.hpp"
#include "model/trace_dump.hpp"
#include "require_fixture.hpp"

namespace npud::test {
namespace {

namespace fs = std::filesystem;

struct DumpCase {
  const char* name;   // tests/data/importer_dumps/<name>.txt
  const char* root;   // NPUD_SHARED_DIR or NPUD_SOURCE_DIR
  const char* path;
};

const std::string kShared = NPUD_SHARED_DIR, kSource = NPUD_SOURCE_DIR;

const DumpCase kCases[] = {
    {"kineto_cuda_sync", NPUD_SHARED_DIR, "/fixtures/kineto/alexnet-sync/benchmark_result_2869224_1695835535_trace.json.gz"},
    {"kineto_rocm_strides", NPUD_SHARED_DIR, "/fixtures/kineto/amd-shapes-strides/mi250_minitoy_train_ROCm6_2_kineto.json.gz"},
    {"kineto_legacy_call_stack", NPUD_SHARED_DIR, "/fixtures/kineto/callstack-legacy/rank_non_gpu.json.gz"},
    {"kineto_nccl_groups", NPUD_SHARED_DIR, "/fixtures/kineto/nccl-comm/nccl_data.json.gz"},
    {"kineto_h200_nanogpt", NPUD_SHARED_DIR, "/fixtures/gpu-h200/nanogpt-bf16-profiler.json.gz"},
    {"capture_h200_nanogpt", NPUD_SHARED_DIR, "/fixtures/gpu-h200/nanogpt-run.npud.json.gz"},
    {"amp_capture_h200_llama_fp16", NPUD_SHARED_DIR, "/fixtures/gpu-h200/hf-llama-loop-amp-fp16.npud.json.gz"},
    {"ascend_trace_view", NPUD_SHARED_DIR, "/fixtures/ascend/pt-trace-view-1step/trace_view.json"},
    {"ascend_kernel_details_pmu", NPUD_SHARED_DIR, "/fixtures/ascend/pt-kernel-details-pmu-bf16/kernel_details.csv"},
    {"ascend_profiler_directory", NPUD_SOURCE_DIR, "/tests/data/ascend/matched_ascend_pt"},
    {"trace_view_launch_blocking", NPUD_SOURCE_DIR, "/tests/data/snapshots/launch_blocking_and_malloc_trace_view.json"},
    {"capture_graph_breaks", NPUD_SOURCE_DIR, "/tests/data/snapshots/compiled_breaks_torch2.npud.json.gz"},
    {"amp_capture_misuse", NPUD_SOURCE_DIR, "/tests/data/amp/misuse.npud.json"},
};

// Paths inside the dump (Trace::source, a capture's cwd) are the checkout's and ../shared's:
// written as <source> and <shared>, so the files do not depend on where the checkout lies.
std::string portable(std::string s) {
  for (const auto& [from, to] : {std::pair{kShared, std::string("<shared>")}, std::pair{kSource, std::string("<source>")}})
    for (size_t at = 0; (at = s.find(from, at)) != std::string::npos;) {
      s.replace(at, from.size(), to);
      at += to.size();
    }
  return s;
}

class ImporterDump : public ::testing::TestWithParam<DumpCase> {};

TEST_P(ImporterDump, MatchesItsSnapshot) {
  const DumpCase& c = GetParam();
  const std::string input = std::string(c.root) + c.path;
  REQUIRE_FIXTURE(input);
  const Trace t = read_trace(input, {});
  std::ostringstream out;
  dump_trace(out, t);
  const std::string dump = portable(out.str());
  const fs::path expected = fs::path(kSource) / "tests/data/importer_dumps" / (std::string(c.name) + ".txt");
  if (const char* u = std::getenv("NPUD_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    fs::create_directories(expected.parent_path());
    std::ofstream(expected, std::ios::binary) << dump;
    GTEST_SKIP() << "rewrote " << expected;
  }
  ASSERT_TRUE(fs::exists(expected)) << expected << " is missing: run with NPUD_UPDATE_GOLDEN=1";
  EXPECT_EQ(dump, file_text(expected)) << "the normalised trace of " << input << " changed: NPUD_UPDATE_GOLDEN=1 rewrites "
                              << expected << " (check its diff)";
}

INSTANTIATE_TEST_SUITE_P(Readers, ImporterDump, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// Every row counts in the digest, not only the rows shown: two traces that differ in one
// field of their last op dump differently.
TEST(TraceDump, DigestCoversRowsBeyondTheShownOnes) {
  auto ops = [](Trace& t, int64_t last_dur) {
    for (int i = 0; i < 30; ++i) {
      Op op;
      op.name = t.intern("aten::add");
      op.kind = OpKind::Aten;
      op.start_ns = i * 10;
      op.dur_ns = i == 29 ? last_dur : 5;
      t.ops.push_back(op);
    }
    t.finalize();
  };
  Trace a, b;
  ops(a, 5);
  ops(b, 6);
  std::ostringstream da, db;
  dump_trace(da, a, 3);
  dump_trace(db, b, 3);
  EXPECT_NE(da.str(), db.str());
  EXPECT_NE(da.str().find("ops: 30 rows, digest "), std::string::npos);
  EXPECT_NE(da.str().find("... 27 more"), std::string::npos);
}

}  // namespace
}  // namespace npud::test
