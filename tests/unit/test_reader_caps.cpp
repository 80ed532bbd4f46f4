// Each reader says what its source records (Trace::caps): the flags rules and reports test
// instead of the input format. Small inputs of tests/data, one per reader.
#include <string>

#include <gtest/gtest.h>

#include "ingest/reader.hpp"
#include "model/trace.hpp"

namespace npud {
namespace {

std::string data(const std::string& rel) { return std::string(NPUD_TEST_DATA) + "/" + rel; }

TEST(ReaderCaps, KinetoJsonRecordsRuntimeCallsOnly) {
  Trace t = read_trace(data("chrome/small_object.json"));
  EXPECT_EQ(t.format, InputFormat::KinetoJson);
  EXPECT_TRUE(t.caps.runtime_calls);
  EXPECT_FALSE(t.caps.dispatched_ops);
  EXPECT_FALSE(t.caps.estimated_costs);
  EXPECT_FALSE(t.caps.startup_step);
  EXPECT_FALSE(t.caps.npu_tasks);
  EXPECT_FALSE(t.caps.end_status);
  EXPECT_FALSE(t.caps.program_argv);
}

TEST(ReaderCaps, CaptureRecordsDispatchEndAndProgram) {
  ReadOptions cut;
  cut.allow_truncated = true;   // the capture of a killed program
  Trace t = read_trace(data("chrome/capture_cut.npud.json"), cut);
  EXPECT_EQ(t.format, InputFormat::Capture);
  EXPECT_TRUE(t.caps.dispatched_ops);
  EXPECT_TRUE(t.caps.estimated_costs);
  EXPECT_TRUE(t.caps.startup_step);
  EXPECT_TRUE(t.caps.end_status);
  EXPECT_TRUE(t.caps.program_argv);
  EXPECT_FALSE(t.caps.runtime_calls);
  EXPECT_FALSE(t.caps.npu_tasks);
}

TEST(ReaderCaps, AscendDirectoryRecordsNpuTasksAndItsRuntimeCalls) {
  Trace t = read_trace(data("ascend/matched_ascend_pt"));
  EXPECT_EQ(t.format, InputFormat::AscendDir);
  EXPECT_TRUE(t.caps.npu_tasks);
  EXPECT_TRUE(t.caps.runtime_calls);   // trace_view.json's AscendCL calls, named without the prefix
  ASSERT_EQ(t.runtime.size(), 1u);
  EXPECT_EQ(t.str(t.runtime[0].name), "aclnnMatmul");   // "AscendCL@aclnnMatmul" as recorded
  EXPECT_EQ(t.runtime[0].api, RuntimeApi::Acl);
  EXPECT_FALSE(t.caps.dispatched_ops);
  EXPECT_FALSE(t.caps.estimated_costs);
  EXPECT_FALSE(t.caps.startup_step);
  EXPECT_FALSE(t.caps.end_status);
  EXPECT_FALSE(t.caps.program_argv);
  // Without a trace_view.json the directory has kernels only.
  Trace csv_only = read_trace(data("ascend/two_ranks/rank0_ascend_pt"));
  EXPECT_EQ(csv_only.format, InputFormat::AscendDir);
  EXPECT_TRUE(csv_only.caps.npu_tasks);
  EXPECT_FALSE(csv_only.caps.runtime_calls);
}

TEST(ReaderCaps, AscendCsvRecordsNpuTasksOnly) {
  Trace t = read_trace(data("ascend/crlf_bom.csv"));
  EXPECT_EQ(t.format, InputFormat::AscendCsv);
  EXPECT_TRUE(t.caps.npu_tasks);
  EXPECT_FALSE(t.caps.runtime_calls);
  EXPECT_FALSE(t.caps.dispatched_ops);
  EXPECT_FALSE(t.caps.estimated_costs);
  EXPECT_FALSE(t.caps.startup_step);
  EXPECT_FALSE(t.caps.end_status);
  EXPECT_FALSE(t.caps.program_argv);
}

}  // namespace
}  // namespace npud
