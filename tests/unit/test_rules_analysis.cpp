// Shared analysis helpers the rules use: interval union and gaps, name normalisation,
// op/kernel linking and units.
#include <gtest/gtest.h>

#include "analysis/intervals.hpp"
#include "analysis/names.hpp"
#include "analysis/trace_index.hpp"
#include "trace_builder.hpp"

namespace npud {
namespace {

TEST(Intervals, UnionMergesOverlapsAndTouchingRanges) {
  auto u = union_of({{10, 20}, {0, 5}, {15, 30}, {30, 35}, {40, 40}, {50, 45}});
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].start, 0);
  EXPECT_EQ(u[0].end, 5);
  EXPECT_EQ(u[1].start, 10);
  EXPECT_EQ(u[1].end, 35);
  EXPECT_EQ(total_length(u), 30);
  EXPECT_EQ(covered_within(u, 3, 12), 4);
  EXPECT_EQ(covered_within(u, 100, 200), 0);
}

TEST(Intervals, GapsWithinAWindow) {
  auto u = union_of({{10, 20}, {30, 40}});
  auto g = gaps_within(u, 0, 50);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].start, 0);
  EXPECT_EQ(g[0].end, 10);
  EXPECT_EQ(g[1].start, 20);
  EXPECT_EQ(g[1].end, 30);
  EXPECT_EQ(g[2].start, 40);
  EXPECT_EQ(g[2].end, 50);
  EXPECT_EQ(gaps_within(u, 15, 35, 11).size(), 0u);  // 10-long gap below the minimum
  EXPECT_EQ(gaps_within(u, 15, 35).size(), 1u);
  EXPECT_EQ(gaps_within({}, 0, 10).size(), 1u);
}

TEST(Names, AtenAndTaskNames) {
  EXPECT_EQ(aten_base("aten::add.Tensor"), "add");
  EXPECT_EQ(aten_base("aten::add_"), "add_");
  EXPECT_EQ(strip_aten("aten::add.Tensor"), "add.Tensor");
  EXPECT_EQ(normalize_task_name("ZerosLike46"), "ZerosLike");
  EXPECT_EQ(normalize_task_name("trans_Cast_5"), "trans_Cast");
  EXPECT_EQ(normalize_task_name("ApplyAdamW179"), "ApplyAdamW");
  EXPECT_EQ(normalize_task_name("hcom_allReduce__445"), "hcom_allReduce");
  EXPECT_EQ(normalize_task_name("MatMulV2"), "MatMulV2");
  EXPECT_EQ(normalize_task_name("aclnnMm_TransData_TransData"), "aclnnMm_TransData_TransData");
  EXPECT_EQ(normalize_task_name("123"), "123");
}

TEST(Names, Units) {
  EXPECT_EQ(format_duration(850), "850 ns");
  EXPECT_EQ(format_duration(45200), "45.2 us");
  EXPECT_EQ(format_duration(2000000), "2.00 ms");
  EXPECT_EQ(format_duration(999600000), "1.00 s");
  EXPECT_EQ(format_share(0.1234), "12.3%");
  EXPECT_EQ(format_share(0.00012), "0.012%");
  EXPECT_EQ(format_number(3), "3");
  EXPECT_EQ(format_number(0.25), "0.25");
}

TEST(TraceIndex, LinksKernelsToOpsAndFindsEnclosingOps) {
  test::TraceBuilder b;
  b.op("aten::linear", 0, 100).op("aten::addmm", 10, 80, {.external_id = 4});
  b.op("worker_op", 0, 10, {.tid = 2});
  b.runtime("cudaLaunchKernel", RuntimeKind::Launch, 20, 5, {.correlation = 40});
  b.kernel("gemm", 30, 100, {.correlation = 40});       // via its runtime call
  b.kernel("other", 200, 10, {.external_id = 4});       // via external id
  b.kernel("orphan", 300, 10);
  Trace t = b.build();
  TraceIndex index(t);
  EXPECT_EQ(index.main_tid(), 1);
  uint32_t addmm = index.enclosing_op(1, 1, test::us(50));
  ASSERT_NE(addmm, kNone);
  EXPECT_EQ(t.str(t.ops[addmm].name), "aten::addmm");
  EXPECT_EQ(index.top_aten(addmm), t.ops[addmm].parent);
  EXPECT_EQ(index.enclosing_op(1, 1, test::us(95)), t.ops[addmm].parent);
  EXPECT_EQ(index.enclosing_op(1, 1, test::us(150)), kNone);
  EXPECT_EQ(index.op_of_kernel(t.kernels[0]), addmm);
  EXPECT_EQ(index.op_of_kernel(t.kernels[1]), addmm);
  EXPECT_EQ(index.op_of_kernel(t.kernels[2]), kNone);
  EXPECT_EQ(index.parent_chain(addmm), "aten::addmm < aten::linear");
  EXPECT_EQ(index.device_busy_ns(), test::us(120));
}

}  // namespace
}  // namespace npud
