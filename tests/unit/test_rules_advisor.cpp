// The advisor-parity rules (docs/advisor-parity.md): SHAPE001 matmul-alignment, SHAPE002
// attention-alignment, DYNSHAPE002 all-ops-dynamic, FUSE009 fused-optimizer, FUSE010
// fusible-sequence, on the advisor's own test profile and on hand-made tasks.
#include <gtest/gtest.h>

#include <filesystem>

#include "ingest/reader.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/kernel_shapes.hpp"
#include "trace_builder.hpp"
#include "require_fixture.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;
using test::TraceBuilder;

const fs::path kPmu = fs::path(NPUD_SHARED_DIR) / "fixtures" / "ascend" / "pt-kernel-details-pmu-bf16" / "kernel_details.csv";


// One device task per entry, back to back, each with its kernel_details row.
struct Task {
  std::string name, type, in, out, state = "static";
  double dur_us = 100, gap_us = 1;
  TaskKind kind = TaskKind::Kernel;
  KernelDetail d = {};
};

Trace tasks(const std::vector<Task>& list) {
  TraceBuilder b;
  double t = 0;
  for (const Task& k : list) {
    b.kernel(k.name, t, k.dur_us, {.kind = k.kind});
    t += k.dur_us + k.gap_us;
  }
  Trace tr = b.build();
  for (size_t i = 0; i < list.size(); ++i) {
    KernelDetail d = list[i].d;
    d.op_type = tr.intern(list[i].type);
    d.input_shapes = tr.intern(list[i].in);
    d.output_shapes = tr.intern(list[i].out);
    if (!list[i].state.empty()) d.op_state = tr.intern(list[i].state);
    d.input_dtypes = tr.intern("DT_BF16;DT_BF16");
    tr.kernels[i].detail = uint32_t(tr.kernel_details.size());
    tr.kernel_details.push_back(d);
  }
  return tr;
}

const Finding* by_op(const std::vector<Finding>& found, std::string_view op) {
  for (const Finding& f : found)
    if (f.location.op == op) return &f;
  return nullptr;
}

TEST(KernelShapes, ParsesTensorsAndAbsentOnes) {
  auto s = parse_kernel_shapes("4096,2,512;;4096,4096;");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->size(), 4u);
  EXPECT_EQ((*s)[0], (KernelShape{4096, 2, 512}));
  EXPECT_TRUE((*s)[1].empty());
  EXPECT_EQ(shapes_text(*s), "[4096, 2, 512], [4096, 4096]");
  EXPECT_FALSE(parse_kernel_shapes("4096,x"));
}

TEST(KernelDetails, ReaderKeepsTypeShapesAndPipeTimes) {
  REQUIRE_FIXTURE(kPmu);
  Trace t = read_trace(kPmu.string());
  const Kernel* first = nullptr;  // the earliest MatMulV2 row
  for (const Kernel& k : t.kernels)
    if (t.str(k.name) == "aclnnMatmul_MatMulCommon_MatMulV2" && (!first || k.start_ns < first->start_ns)) first = &k;
  ASSERT_NE(first, nullptr);
  const KernelDetail& d = t.kernel_details[first->detail];
  EXPECT_EQ(t.str(d.op_type), "MatMulV2");
  EXPECT_EQ(t.str(d.input_shapes), "81920,4096;8192,512");   // the CSV's inner quotes stripped
  EXPECT_EQ(t.str(d.output_shapes), "4096,512");
  EXPECT_FLOAT_EQ(d.aicore_us, 183.87f);
  EXPECT_FLOAT_EQ(d.aic_mte2_us, 177.314f);
}

TEST(Shape001, FixtureUnalignedMatmulIsTheAdvisorsUnaffineOne) {
  REQUIRE_FIXTURE(kPmu);
  auto found = test::run_rule(shape001_rule(), read_trace(kPmu.string()));
  ASSERT_EQ(found.size(), 1u);   // the advisor's "set of unaffine operators": this op and shape only
  EXPECT_EQ(found[0].location.op, "aclnnMatmul_MatMulV3Common_MatMulV5");
  EXPECT_EQ(found[0].metric("count"), 4);
  EXPECT_EQ(found[0].metric("inner_axis"), 15365);
  EXPECT_EQ(found[0].severity, Severity::Warning);
  EXPECT_NE(found[0].message.find("[8192, 15365], [8192, 4096]"), std::string::npos) << found[0].message;
}

TEST(Shape001, BatchedAndNzShapesAndTheSizeFloor) {
  std::vector<Task> list;
  for (int i = 0; i < 2; ++i) {
    list.push_back({"BatchMatMulV2", "BatchMatMulV2", "16,4096,4000;16,4000,4096", "16,4096,4096"});
    list.push_back({"BatchMatMulOk", "BatchMatMulV2", "16,4096,4096;16,4096,4096", "16,4096,4096"});
    list.push_back({"MatMulNz", "MatMulV2", "256,512,16,16;256,512,16,16", "512,256,16,16"});
    list.push_back({"SmallMatMul", "MatMulV2", "64,100;100,64", "64,64"});   // < 100 MiB: not judged
  }
  auto found = test::run_rule(shape001_rule(), tasks(list));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].location.op, "BatchMatMulV2");
  EXPECT_EQ(found[0].metric("count"), 2);
  EXPECT_EQ(found[0].metric("inner_axis"), 4000);
}

TEST(Shape002, FixtureVarlenHeadDimOnly) {
  REQUIRE_FIXTURE(kPmu);
  auto found = test::run_rule(shape002_rule(), read_trace(kPmu.string()));
  ASSERT_EQ(found.size(), 1u);   // BSH 4096,2,512 with N=4: D=128, S=4096 are aligned
  EXPECT_EQ(found[0].location.op, "aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore_varlen");
  EXPECT_EQ(found[0].metric("head_dim"), 511);
  EXPECT_NE(found[0].message.find("head dim D=511 is not a multiple of 128"), std::string::npos) << found[0].message;
}

TEST(Shape002, BnsdHeadDimAndSequenceFromSoftmaxShapes) {
  auto found = test::run_rule(
      shape002_rule(),
      tasks({{"FlashAttentionScore", "FlashAttentionScore", "2,16,1000,96;2,16,1000,96;2,16,1000,96;;;;1000,1000",
              "2,16,1000,8;2,16,1000,8;;2,16,1000,96"},
             {"FlashAttentionScoreGrad", "FlashAttentionScoreGrad",
              "2,16,1024,128;2,16,1024,128;2,16,1024,128;2,16,1024,128;1024,1024;2,16,1024,8;2,16,1024,8",
              "2,16,1024,128;2,16,1024,128;2,16,1024,128"}}));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].metric("head_dim"), 96);
  EXPECT_EQ(found[0].metric("seq_len"), 1000);
  EXPECT_NE(found[0].message.find("head dim D=96 and sequence length S=1000 are"), std::string::npos);
}

TEST(Dynshape002, AllDynamicOnlyWithTheColumn) {
  REQUIRE_FIXTURE(kPmu);
  auto found = test::run_rule(dynshape002_rule(), read_trace(kPmu.string()));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].metric("count"), 29);
  // one static op: not all dynamic
  EXPECT_TRUE(test::run_rule(dynshape002_rule(), tasks({{"Add", "Add", "4", "4", "dynamic"},
                                                        {"Mul", "Mul", "4", "4", "static"}}))
                  .empty());
  // no OP State column: nothing is known, nothing said (the advisor reports "all dynamic" here)
  EXPECT_TRUE(test::run_rule(dynshape002_rule(), tasks({{"Add", "Add", "4", "4", ""}, {"Mul", "Mul", "4", "4", ""}}))
                  .empty());
}

TEST(Fuse009, OptimizerStepRangesOfFusibleClasses) {
  TraceBuilder b;
  b.op("Optimizer.step#AdamW.step", 1000, 3000);
  for (int i = 0; i < 12; ++i) b.op(i % 2 ? "aten::add_" : "aten::mul_", 1010 + i * 100, 40);
  b.op("Optimizer.step#MyOpt.step", 5000, 100);          // no fused replacement: quiet
  b.op("Optimizer.zero_grad#AdamW.zero_grad", 6000, 100);  // not a step
  Trace t = b.build();
  EXPECT_TRUE(test::run_rule(fuse009_rule(), t).empty());   // not an NPU profile
  t.set_env("device", "npu");
  auto found = test::run_rule(fuse009_rule(), t);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].location.op, "Optimizer.step#AdamW.step");
  EXPECT_EQ(found[0].metric("inner_ops"), 12);
  EXPECT_NE(found[0].message.find("torch_npu.optim.NpuFusedAdamW"), std::string::npos) << found[0].message;
  // captures are FUSE007's
  TraceBuilder c;
  c.capture();
  c.op("Optimizer.step#AdamW.step", 0, 100);
  Trace ct = c.build();
  ct.set_env("device", "npu");
  EXPECT_TRUE(test::run_rule(fuse009_rule(), ct).empty());
}

KernelDetail cube_moving_data(double dur_us) {
  KernelDetail d;
  d.aicore_us = float(dur_us * 0.95);
  d.aic_mte2_us = float(dur_us * 0.95 * 0.7);
  d.aic_fixpipe_us = float(dur_us * 0.95 * 0.2);
  d.aiv_us = d.aiv_mte2_us = d.aiv_mte3_us = 0;
  return d;
}

KernelDetail vector_busy(double dur_us) {
  KernelDetail d;
  d.aicore_us = d.aic_mte2_us = d.aic_fixpipe_us = 0;
  d.aiv_us = float(dur_us * 0.95);
  d.aiv_mte2_us = d.aiv_mte3_us = float(dur_us * 0.95 * 0.2);
  return d;
}

TEST(Fuse010, MteBoundAndHostBoundSequences) {
  std::vector<Task> list;
  for (int i = 0; i < 8; ++i) {
    list.push_back({"MatMulV3", "MatMulV3", "4096,4096;4096,4096", "4096,4096", "static", 200, 2, TaskKind::Kernel,
                    KernelDetail{.aicore_us = 190, .aiv_us = 0, .aic_mte2_us = 50, .aiv_mte2_us = 0,
                                 .aic_fixpipe_us = 10, .aiv_mte3_us = 0}});
    for (const char* n : {"TransData_1", "Cast", "TransData_2"})
      list.push_back({n, "TransData", "4096,4096", "4096,4096", "static", 30, 1, TaskKind::Kernel, cube_moving_data(30)});
    for (const char* n : {"Mul", "Add", "Sigmoid"})
      list.push_back({n, n, "1024", "1024", "static", 10, 40, TaskKind::Kernel, vector_busy(10)});
  }
  auto found = test::run_rule(fuse010_rule(), tasks(list));
  ASSERT_FALSE(found.empty());
  const Finding* mte = nullptr;
  const Finding* host = nullptr;
  for (const Finding& f : found) {
    if (f.metric("mte_bound") == 1 && f.location.op == "TransData") mte = &f;
    if (f.metric("host_bound") == 1 && f.location.op == "Mul") host = &f;
  }
  ASSERT_NE(mte, nullptr);
  // TransData, Cast, TransData is MTE-bound (90 %), and so are its extensions by Mul (85 %) and
  // Add (81 %); of a sequence and its extensions the advisor keeps the longest-running one.
  EXPECT_EQ(mte->metric("length"), 5);
  EXPECT_EQ(mte->metric("count"), 8);
  EXPECT_EQ(mte->metric("start_index"), 1);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->metric("count"), 8);
  EXPECT_GT(host->cost_ns, 0);
  // an HCCL task breaks every window; no time columns, no finding
  std::vector<Task> plain = list;
  for (Task& k : plain) k.d = KernelDetail{};
  EXPECT_TRUE(test::run_rule(fuse010_rule(), tasks(plain)).empty());
}

TEST(Freq001, OpsRunBelowTheTopClock) {
  TraceBuilder b;
  for (int i = 0; i < 20; ++i) b.kernel(i % 2 ? "MatMulV3" : "Add", i * 110, 100, {.task_type = "AI_CORE"});
  Trace t = b.build();
  EXPECT_TRUE(test::run_rule(freq001_rule(), t).empty());   // no counters
  t.ai_core_freq = {{-10'000, 1800}, {1'095'000, 1400}, {1'645'000, 1800}};   // calls 10-14 at 1400 MHz
  auto found = test::run_rule(freq001_rule(), t);
  // Add ran calls 10, 12, 14 at 1400: 3 x 400 / (1800 x 10) = 6.7 %; MatMulV3 only 11 and 13:
  // 4.4 %, under the advisor's 5 %.
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].location.op, "Add");
  EXPECT_EQ(found[0].metric("top_mhz"), 1800);
  EXPECT_EQ(found[0].metric("min_mhz"), 1400);
  EXPECT_EQ(found[0].metric("count"), 10);
  EXPECT_NEAR(found[0].metric("drop_ratio"), 1200.0 / 18000.0, 1e-6);
  // a one-call dip under 5 % of the op's calls is not reported
  t.ai_core_freq = {{-10'000, 1800}, {1'095'000, 1700}, {1'150'000, 1800}};
  EXPECT_TRUE(test::run_rule(freq001_rule(), t).empty());
}

}  // namespace
}  // namespace npud
