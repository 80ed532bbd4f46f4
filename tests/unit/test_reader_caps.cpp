// Each reader says what its source records (Trace::caps): the flags rules and reports test
// instead of the input format. Small inputs of tests/data, one per reader.
#include <string>

#include <gtest/gtest.h>

#include "ingest/reader.hpp"
#include "model/trace.hpp"

namespace npud {
namespace {

std::string data(const std::string& rel) { return std::string(NPUD_TEST_DATA) + "/" + rel; }

// The flags a reader set, by name, in declaration order.
std::string set_flags(const TraceCaps& c) {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (on) out += (out.empty() ? "" : " ") + std::string(name);
  };
  add(c.dispatched_ops, "dispatched_ops");
  add(c.estimated_costs, "estimated_costs");
  add(c.startup_step, "startup_step");
  add(c.runtime_calls, "runtime_calls");
  add(c.npu_tasks, "npu_tasks");
  add(c.end_status, "end_status");
  add(c.program_argv, "program_argv");
  return out;
}

TEST(ReaderCaps, KinetoJsonRecordsRuntimeCallsOnly) {
  Trace t = read_trace(data("chrome/small_object.json"));
  EXPECT_EQ(t.format, InputFormat::KinetoJson);
  EXPECT_EQ(set_flags(t.caps), "runtime_calls");
}

TEST(ReaderCaps, CaptureRecordsDispatchEndAndProgram) {
  ReadOptions cut;
  cut.allow_truncated = true;   // the capture of a killed program
  Trace t = read_trace(data("chrome/capture_cut.npud.json"), cut);
  EXPECT_EQ(t.format, InputFormat::Capture);
  EXPECT_EQ(set_flags(t.caps), "dispatched_ops estimated_costs startup_step end_status program_argv");
}

TEST(ReaderCaps, AscendDirectoryRecordsNpuTasksAndItsRuntimeCalls) {
  Trace t = read_trace(data("ascend/matched_ascend_pt"));
  EXPECT_EQ(t.format, InputFormat::AscendDir);
  EXPECT_EQ(set_flags(t.caps), "runtime_calls npu_tasks");   // trace_view.json's AscendCL calls
  ASSERT_EQ(t.runtime.size(), 1u);
  EXPECT_EQ(t.str(t.runtime[0].name), "aclnnMatmul");   // "AscendCL@aclnnMatmul" as recorded
  EXPECT_EQ(t.runtime[0].api, RuntimeApi::Acl);
  // Without a trace_view.json the directory has kernels only.
  Trace csv_only = read_trace(data("ascend/two_ranks/rank0_ascend_pt"));
  EXPECT_EQ(csv_only.format, InputFormat::AscendDir);
  EXPECT_EQ(set_flags(csv_only.caps), "npu_tasks");
}

TEST(ReaderCaps, AscendCsvRecordsNpuTasksOnly) {
  Trace t = read_trace(data("ascend/crlf_bom.csv"));
  EXPECT_EQ(t.format, InputFormat::AscendCsv);
  EXPECT_EQ(set_flags(t.caps), "npu_tasks");
}

}  // namespace
}  // namespace npud
