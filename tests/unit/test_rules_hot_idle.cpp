// HOT001 hot-ops and IDLE001 device-idle-gap on hand-written traces.
#include <gtest/gtest.h>

#include "rules/builtin_rules.hpp"
#include "trace_builder.hpp"

namespace npud {
namespace {

using test::TraceBuilder;

bool contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

// --- HOT001 ---

TEST(Hot001, ListsTopOpsAndKernelsBySelfAndDeviceTime) {
  TraceBuilder b;
  b.op("aten::linear", 0, 400);   // self 100: its addmm child takes 300
  b.op("aten::addmm", 50, 300);
  b.op("aten::relu", 500, 50);
  b.op("aten::relu", 600, 50);
  b.op("aten::add", 700, 10);
  b.kernel("gemm", 0, 900).kernel("relu_kernel", 1000, 100);
  auto f = test::run_rule(hot001_rule(), b.build(), RuleOptions{.top_n = 2});
  ASSERT_EQ(f.size(), 4u);
  for (const auto& x : f) EXPECT_EQ(x.severity, Severity::Info);
  // cost = time spent: gemm 900, addmm 300, relu 100 (2 calls) == linear 100 (tie keeps rule order)
  EXPECT_EQ(f[0].location.op, "gemm");
  EXPECT_EQ(f[0].metric("is_device"), 1);
  EXPECT_NEAR(f[0].metric("share"), 0.9, 1e-12);
  EXPECT_EQ(f[1].location.op, "aten::addmm");
  EXPECT_EQ(f[1].metric("rank"), 1);
  EXPECT_NEAR(f[1].metric("share"), 300.0 / 510.0, 1e-12);
  // Host #2 is a tie at 100 us: aten::linear and aten::relu; names break ties.
  const Finding& second = f[2].metric("is_device") == 0 ? f[2] : f[3];
  EXPECT_EQ(second.location.op, "aten::linear");
  EXPECT_EQ(second.metric("rank"), 2);
  EXPECT_TRUE(contains(f[1].message, "host op #1 aten::addmm")) << f[1].message;
}

TEST(Hot001, TopZeroOrEmptyTraceListsNothing) {
  TraceBuilder a;
  a.op("aten::mm", 0, 10);
  EXPECT_TRUE(test::run_rule(hot001_rule(), a.build(), RuleOptions{.top_n = 0}).empty());
  TraceBuilder b;
  EXPECT_TRUE(test::run_rule(hot001_rule(), b.build()).empty());
}

TEST(Hot001, AscendInstanceSuffixesAreMerged) {
  TraceBuilder b;
  test::read_as_ascend_csv(b.raw());
  b.kernel("ZerosLike46", 0, 10).kernel("ZerosLike47", 20, 10).kernel("MatMulV2", 40, 5);
  auto f = test::run_rule(hot001_rule(), b.build());
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].location.op, "ZerosLike");
  EXPECT_EQ(f[0].metric("count"), 2);
  EXPECT_EQ(f[1].location.op, "MatMulV2");
}

// --- IDLE001 ---

TEST(Idle001, TwoMillisecondGapIsFoundWithTheHostActivity) {
  TraceBuilder b;
  b.kernel("k1", 0, 1000).kernel("k2", 3000, 1000);
  b.op("aten::mm", 0, 50);
  b.op("aten::item", 1100, 1800, {.file = "train.py", .line = 95});
  b.op("aten::_local_scalar_dense", 1150, 1700);
  auto f = test::run_rule(idle001_rule(), b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "IDLE001");
  EXPECT_EQ(f[0].metric("idle_ns"), 2000000);
  EXPECT_EQ(f[0].metric("largest_gap_ns"), 2000000);
  EXPECT_EQ(f[0].metric("gap_count"), 1);
  EXPECT_DOUBLE_EQ(f[0].metric("idle_share"), 0.5);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].cost_ns, 2000000);
  EXPECT_TRUE(contains(f[0].message, "largest 2.00 ms")) << f[0].message;
  EXPECT_TRUE(contains(f[0].message, "aten::_local_scalar_dense < aten::item (train.py:95)")) << f[0].message;
  EXPECT_EQ(f[0].location.file, "train.py");
  ASSERT_EQ(f[0].notes.size(), 1u);
  EXPECT_TRUE(contains(f[0].notes[0], "gap 2.00 ms at +1.00 ms")) << f[0].notes[0];
}

TEST(Idle001, GapsBelowTheThresholdAreIgnored) {
  TraceBuilder b;
  b.kernel("k1", 0, 100).kernel("k2", 110, 100).kernel("k3", 240, 100);  // 10 and 30 us gaps
  EXPECT_TRUE(test::run_rule(idle001_rule(), b.build()).empty());
  TraceBuilder c;
  c.kernel("k1", 0, 100).kernel("k2", 110, 100).kernel("k3", 240, 100);
  auto f = test::run_rule(idle001_rule(), c.build(), RuleOptions{.min_gap_us = 20});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].metric("idle_ns"), 30000);
}

TEST(Idle001, OverlappingStreamsAndDevicesAreSeparate) {
  TraceBuilder b;
  // Device 0: two streams that together leave no gap. Device 1: one 500 us gap.
  b.kernel("a", 0, 1000, {.stream = 1}).kernel("b", 900, 1000, {.stream = 2});
  b.kernel("c", 0, 100, {.device = 1}).kernel("d", 600, 100, {.device = 1});
  auto f = test::run_rule(idle001_rule(), b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].metric("device"), 1);
  EXPECT_EQ(f[0].metric("idle_ns"), 500000);
  EXPECT_TRUE(contains(f[0].message, "no host op recorded")) << f[0].message;
}

TEST(Idle001, OnlyTimeInsideStepsCounts) {
  TraceBuilder b;
  b.step(1, 0, 1000).step(2, 5000, 1000);
  b.kernel("k", 0, 900).kernel("k", 5000, 500).kernel("k", 5700, 300);  // 100 us, 200 us in steps
  auto f = test::run_rule(idle001_rule(), b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].metric("idle_ns"), 300000);
  EXPECT_EQ(f[0].metric("gap_count"), 2);
  EXPECT_EQ(f[0].metric("window_ns"), 2000000);
  EXPECT_EQ(f[0].severity, Severity::Warning);  // 15%
  EXPECT_TRUE(contains(f[0].notes[0], "(step 2)")) << f[0].notes[0];
}

TEST(Idle001, SmallIdleShareIsInfo) {
  TraceBuilder b;
  b.kernel("k", 0, 10000).kernel("k", 10100, 10000);  // 100 us of 20.1 ms
  auto f = test::run_rule(idle001_rule(), b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Info);
}

}  // namespace
}  // namespace npud
