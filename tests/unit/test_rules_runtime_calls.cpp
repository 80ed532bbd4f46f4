// COMPILE001 op-compile-on-dispatch and MEM001 memory-op-time (host runtime calls of NPU
// profiles), DATA001 slow-dataloader and GC001 gc-pauses, on real fixtures and on hand-made
// profiles.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "ingest/chrome_json.hpp"
#include "ingest/reader.hpp"
#include "rules/builtin_rules.hpp"
#include "trace_builder.hpp"
#include "require_fixture.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;
using test::TraceBuilder;

const fs::path kTraceView =
    fs::path(NPUD_SHARED_DIR) / "fixtures" / "ascend" / "pt-trace-view-1step" / "trace_view.json";

// One 10 ms step with the named host runtime calls (each `dur_us` long), and nothing else.
Trace step_with(std::string_view name, int calls, double dur_us) {
  TraceBuilder b;
  b.step(1, 0, 10'000);
  for (int i = 0; i < calls; ++i) b.runtime(name, RuntimeKind::Other, 100 + i * (dur_us + 10), dur_us);
  return b.build();
}

// The fixture: 11 aclopCompileAndExecute calls take 6.6 ms of a 14.1 ms step. Ascend's advisor
// needs 20 calls and says nothing; the share of the step is what matters.
TEST(Compile001, CompileTimeOfTheFixtureStepIsAWarning) {
  REQUIRE_FIXTURE(kTraceView);
  auto f = test::run_rule(compile001_rule(), read_trace(kTraceView.string()));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].metric("count"), 11);
  EXPECT_NEAR(f[0].metric("time_share"), 0.47, 0.01);
  EXPECT_NE(f[0].fix.find("jit_compile=False"), std::string::npos);
}

TEST(Compile001, ManyShortCompilesAreInfoFewShortOnesNothing) {
  auto many = test::run_rule(compile001_rule(), step_with("AscendCL@aclopCompileAndExecute", 25, 5));
  ASSERT_EQ(many.size(), 1u);
  EXPECT_EQ(many[0].severity, Severity::Info);   // 25 calls, 1.25 % of the step
  EXPECT_TRUE(test::run_rule(compile001_rule(), step_with("AscendCL@aclopCompileAndExecute", 5, 5)).empty());
  EXPECT_TRUE(test::run_rule(compile001_rule(), step_with("AscendCL@aclnnMatmul", 50, 50)).empty());
}

// The fixture's one aclMallocMemInner (73 us of 14 ms) is the allocator warming up: quiet.
TEST(Mem001, TheFixturesSingleAllocationIsQuiet) {
  REQUIRE_FIXTURE(kTraceView);
  EXPECT_TRUE(test::run_rule(mem001_rule(), read_trace(kTraceView.string())).empty());
}

TEST(Mem001, AllocationsTakingTheStepAreAWarning) {
  TraceBuilder b;
  b.step(1, 0, 10'000);
  for (int i = 0; i < 10; ++i) {
    b.runtime("AscendCL@aclrtMalloc", RuntimeKind::Other, 100 + i * 400, 150);
    b.runtime("AscendCL@aclrtFree", RuntimeKind::Other, 300 + i * 400, 50);
  }
  auto f = test::run_rule(mem001_rule(), b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].metric("count"), 20);
  EXPECT_NEAR(f[0].metric("time_share"), 0.2, 1e-9);
  EXPECT_NE(f[0].message.find("aclrtMalloc, aclrtFree"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].fix.find("expandable_segments:True"), std::string::npos);
  EXPECT_TRUE(test::run_rule(mem001_rule(), step_with("AscendCL@aclrtMalloc", 2, 20)).empty());
}

// The Kineto fixture's loader waits 0.1 ms per step of 82-166 ms: quiet.
TEST(Data001, TheFixturesFastLoaderIsQuiet) {
  fs::path p = fs::path(NPUD_SHARED_DIR) / "fixtures" / "kineto" / "diff-pair" / "test" / "test.json.gz";
  REQUIRE_FIXTURE(p);
  Trace t = read_trace(p.string());
  ASSERT_GT(std::count_if(t.ops.begin(), t.ops.end(),
                          [&](const Op& op) { return t.str(op.name).find("DataLoader") != std::string_view::npos; }),
            0);
  EXPECT_TRUE(test::run_rule(data001_rule(), t).empty());
}

// The torch_npu fixture's step waits 1.3 ms of 14 ms for a num_workers=0 loader.
TEST(Data001, TheAscendFixturesSingleProcessLoaderIsAWarning) {
  REQUIRE_FIXTURE(kTraceView);
  auto f = test::run_rule(data001_rule(), read_trace(kTraceView.string()));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].metric("count"), 2);
  EXPECT_NEAR(f[0].metric("time_share"), 0.094, 0.002);
  EXPECT_NE(f[0].fix.find("num_workers=0"), std::string::npos);
}

TEST(Data001, LongOrFrequentWaitsAreAWarning) {
  const std::string wait = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
  auto steps_with_waits = [&](double wait_us) {
    TraceBuilder b;
    for (int s = 0; s < 4; ++s) {
      b.step(s + 1, s * 40'000, 40'000);
      b.op(wait, s * 40'000 + 10, wait_us, {.kind = OpKind::Annotation});
    }
    return test::run_rule(data001_rule(), b.build());
  };
  auto frequent = steps_with_waits(8'000);   // 20 % of each step, none 10 ms long
  ASSERT_EQ(frequent.size(), 1u);
  EXPECT_NEAR(frequent[0].metric("time_share"), 0.2, 1e-9);
  EXPECT_NE(frequent[0].fix.find("num_workers=0"), std::string::npos);
  EXPECT_TRUE(steps_with_waits(100).empty());   // 0.25 %
  TraceBuilder one;
  one.step(1, 0, 1'000'000).op(wait, 10, 12'000, {.kind = OpKind::Annotation});   // 1.2 %, but 12 ms at once
  EXPECT_EQ(test::run_rule(data001_rule(), one.build()).size(), 1u);
}

// torch_npu writes collections longer than gc_detect_threshold as `gc` ranges (JSON, as read).
TEST(Gc001, CollectionsInTheStepAreFoundShortOnesAreNot) {
  std::string json = R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":300000},
    {"ph":"X","cat":"gc","name":"GC","pid":1,"tid":1,"ts":1000,"dur":15000},
    {"ph":"X","cat":"gc","name":"GC","pid":1,"tid":1,"ts":50000,"dur":14000},
    {"ph":"X","cat":"gc","name":"GC","pid":1,"tid":1,"ts":90000,"dur":2000},
    {"ph":"X","cat":"gc","name":"GC","pid":1,"tid":1,"ts":99000,"dur":500}]})";
  auto f = test::run_rule(gc001_rule(), read_chrome_json_buffer(json, "gc.json", {}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].metric("count"), 3);            // the 0.5 ms one is below 1 ms
  EXPECT_NEAR(f[0].metric("time_share"), 0.1033, 1e-3);
  EXPECT_NE(f[0].fix.find("gc.freeze()"), std::string::npos);
  if (fs::exists(kTraceView)) EXPECT_TRUE(test::run_rule(gc001_rule(), read_trace(kTraceView.string())).empty());
}

// ASCEND_LAUNCH_BLOCKING=1: every launch is followed by a synchronize on the same thread. The
// fixture's 4 syncs among ~100 launches are ordinary.
TEST(Launch001, ASyncAfterMostLaunchesIsAnError) {
  TraceBuilder b;
  b.step(1, 0, 10'000);
  for (int i = 0; i < 30; ++i) {
    b.runtime("Node@launch", RuntimeKind::Other, 100 + i * 300, 20);
    if (i % 10 != 0) b.runtime("AscendCL@aclrtSynchronizeStream", RuntimeKind::Sync, 130 + i * 300, 200);
  }
  auto f = test::run_rule(launch001_rule(), b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_NEAR(f[0].metric("co_occurrence"), 0.9, 1e-9);
  EXPECT_NE(f[0].fix.find("ASCEND_LAUNCH_BLOCKING"), std::string::npos);
  if (fs::exists(kTraceView)) EXPECT_TRUE(test::run_rule(launch001_rule(), read_trace(kTraceView.string())).empty());
}

// Two 10 ms steps, each with `layers` SyncBatchNorm forwards (the module event around the
// statistics gather, as torch.profiler with_modules records them).
Trace syncbn_steps(int layers) {
  TraceBuilder b;
  for (int s = 0; s < 2; ++s) {
    b.step(s + 1, s * 10'000.0, 10'000);
    for (int l = 0; l < layers; ++l) {
      double t0 = s * 10'000.0 + 100 + l * 100;
      b.op(fmt::format("nn.Module: SyncBatchNorm_{}", l), t0, 80, {.kind = OpKind::Python});
      b.op("aten::batch_norm_gather_stats_with_counts", t0 + 10, 50);
    }
  }
  return b.build();
}

TEST(SyncBn001, ManyLayersPerStepAreFoundEachOnce) {
  auto found = test::run_rule(syncbn001_rule(), syncbn_steps(24));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::Warning);
  EXPECT_EQ(found[0].metric("count"), 48);  // module and gather of one layer count once
  EXPECT_EQ(found[0].metric("per_step"), 24);
  EXPECT_TRUE(test::run_rule(syncbn001_rule(), syncbn_steps(10)).empty());
  if (fs::exists(kTraceView)) EXPECT_TRUE(test::run_rule(syncbn001_rule(), read_trace(kTraceView.string())).empty());
}

// Device busy 0-100 ms and 400-500 ms, host ops only beside the 300 ms window between (plus
// `in_window`, when given, on the main thread).
Trace silent_window(std::string_view in_window = {}, double in_window_dur_us = 0) {
  TraceBuilder b;
  b.op("aten::mm", 0, 90'000);
  b.kernel("gemm", 1'000, 99'000);
  b.op("aten::mm", 400'000, 90'000);
  b.kernel("gemm", 400'500, 99'000);
  if (!in_window.empty()) b.op(in_window, 100'500, in_window_dur_us, {.kind = OpKind::Annotation});
  return b.build();
}

TEST(Gc001, WithoutGcEventsALongSilentWindowIsAConjecturedCollection) {
  auto found = test::run_rule(gc001_rule(), silent_window());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::Info);
  EXPECT_NE(found[0].message.find("1 device idle window of 200 ms or more with a silent host"), std::string::npos)
      << found[0].message;
  EXPECT_NEAR(found[0].metric("longest_ns"), 300'500'000, 1'000'000);
  // The host waiting in a DataLoader across the window is busy, not collecting (DATA001's case).
  EXPECT_TRUE(
      test::run_rule(gc001_rule(), silent_window("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 299'000))
          .empty());
  // Many short host events in the window: not silent.
  TraceBuilder busy_host;
  busy_host.kernel("gemm", 0, 100'000).kernel("gemm", 400'000, 100'000);
  for (int i = 0; i < 100; ++i) busy_host.runtime("cudaLaunchKernel", RuntimeKind::Launch, 101'000 + i * 2'500, 50);
  EXPECT_TRUE(test::run_rule(gc001_rule(), busy_host.build()).empty());
  // No host recorded at all (kernel_details.csv alone): nothing to say about the host.
  TraceBuilder device_only;
  device_only.kernel("gemm", 0, 100'000).kernel("gemm", 400'000, 100'000);
  EXPECT_TRUE(test::run_rule(gc001_rule(), device_only.build()).empty());
  const fs::path pmu = fs::path(NPUD_SHARED_DIR) / "fixtures" / "ascend" / "pt-kernel-details-pmu-bf16" / "kernel_details.csv";
  if (fs::exists(pmu)) EXPECT_TRUE(test::run_rule(gc001_rule(), read_trace(pmu.string())).empty());
}

}  // namespace
}  // namespace npud
