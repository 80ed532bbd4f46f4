// CONTIG001 contiguity-copy on hand-written traces.
#include <gtest/gtest.h>

#include "rules/builtin_rules.hpp"
#include "trace_builder.hpp"

namespace npud {
namespace {

using test::TraceBuilder;

std::vector<Finding> contig(const Trace& t) { return test::run_rule(contig001_rule(), t); }

// x.permute(0, 2, 1).contiguous() as Kineto records it: the copy children are not counted again.
TEST(Contig001, PermuteThenContiguousIsFlagged) {
  TraceBuilder b;
  b.op("aten::permute", 0, 10, {.file = "model.py", .line = 20});
  b.op("aten::as_strided", 2, 5);
  b.op("aten::contiguous", 20, 100, {.file = "model.py", .line = 20, .module = "model.attn"});
  b.op("aten::clone", 22, 95);
  b.op("aten::empty_like", 23, 5);
  b.op("aten::copy_", 30, 80);
  auto f = contig(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "aten::contiguous");
  EXPECT_EQ(f[0].location.file, "model.py");
  EXPECT_EQ(f[0].location.module, "model.attn");
  EXPECT_EQ(f[0].metric("count"), 1);
  EXPECT_EQ(f[0].metric("time_ns"), 100000);
  EXPECT_NE(f[0].message.find("after aten::permute"), std::string::npos) << f[0].message;
  EXPECT_EQ(f[0].severity, Severity::Warning);  // 100 of 125 us
}

TEST(Contig001, ContiguousAfterANonViewOpIsNotFlagged) {
  TraceBuilder b;
  b.op("aten::add", 0, 10).op("aten::contiguous", 20, 1);
  b.op("aten::permute", 30, 2).op("aten::relu", 40, 5).op("aten::contiguous", 50, 1);
  EXPECT_TRUE(contig(b.build()).empty());
}

TEST(Contig001, RecordedStridesDecide) {
  TraceBuilder b;
  // Non-contiguous input (a transposed 64x32): flagged without any preceding view op.
  b.op("aten::clone", 0, 50, {.inputs = {{"float", {64, 32}, {1, 64}}}});
  // Contiguous input right after a permute: strides win, not flagged.
  b.op("aten::permute", 100, 2);
  b.op("aten::contiguous", 110, 1, {.inputs = {{"float", {64, 32}, {32, 1}}}});
  // A strided copy of a few KiB (a labels slice) is one small launch: not flagged.
  b.op("aten::clone", 200, 5, {.inputs = {{"int64", {8, 47}, {48, 1}}}});
  auto f = contig(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "aten::clone");
  EXPECT_NE(f[0].message.find("non-contiguous input"), std::string::npos);
}


TEST(Contig001, ReshapeThatCopiesIsFlaggedOnce) {
  TraceBuilder b;
  b.op("aten::transpose", 0, 5);
  b.op("aten::reshape", 10, 60);
  b.op("aten::clone", 12, 50);
  b.op("aten::copy_", 14, 40);
  b.op("aten::_unsafe_view", 65, 2);
  b.op("aten::transpose", 100, 5);
  b.op("aten::reshape", 110, 3);  // a view: no copy child
  b.op("aten::view", 111, 1);
  auto f = contig(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "aten::reshape");
  EXPECT_EQ(f[0].metric("count"), 1);
}

TEST(Contig001, CopyIntoASliceIsNotALayoutCopy) {
  TraceBuilder b;
  b.op("aten::slice", 0, 5).op("aten::copy_", 10, 20);
  EXPECT_TRUE(contig(b.build()).empty());
}

TEST(Contig001, DeviceLayoutTasksAreFlagged) {
  TraceBuilder b;
  test::read_as_ascend_csv(b.raw());
  b.kernel("MatMulV2", 0, 800);
  b.kernel("trans_TransData_20", 800, 50);
  b.kernel("trans_TransData_22", 900, 30);
  b.kernel("aclnnMm_TransData_TransData", 1000, 20);
  b.kernel("trans_Cast_5", 1100, 100, {.kind = TaskKind::AiCpu});  // FALLBACK001's
  auto f = contig(b.build());
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].location.op, "trans_TransData");
  EXPECT_EQ(f[0].metric("count"), 2);
  EXPECT_EQ(f[0].metric("time_ns"), 80000);
  EXPECT_NEAR(f[0].metric("device_share"), 80.0 / 1000.0, 1e-12);
  EXPECT_EQ(f[1].location.op, "aclnnMm_TransData_TransData");
}

}  // namespace
}  // namespace npud
