// Rules over torch_npu kernel_details.csv columns (op state, block dim, PMU ratios): the
// reader keeps them per task; BOUND001 pmu-bottleneck on the real fixtures and hand-made tasks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "ingest/reader.hpp"
#include "rules/builtin_rules.hpp"
#include "trace_builder.hpp"
#include "require_fixture.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;
using test::TraceBuilder;

const fs::path kAscend = fs::path(NPUD_SHARED_DIR) / "fixtures" / "ascend";
const fs::path kPmu = kAscend / "pt-kernel-details-pmu-bf16" / "kernel_details.csv";
const fs::path kLegacy = kAscend / "pt-kernel-details-fp16-legacy-pmu" / "kernel_details.csv";


// One task of `dur_us` with the given unit ratios (NaN: column absent).
Trace task_with(std::string_view name, double dur_us, KernelDetail d) {
  TraceBuilder b;
  b.kernel(name, 0, dur_us);
  b.kernel("Other", dur_us + 1, 1);
  Trace t = b.build();
  for (Kernel& k : t.kernels)
    if (t.str(k.name) == name) {
      k.detail = uint32_t(t.kernel_details.size());
      t.kernel_details.push_back(d);
    }
  return t;
}

KernelDetail ratios(float mac, float vec, float scalar, float mte2, float mte3 = 0) {
  KernelDetail d;
  d.aic_mac = mac;
  d.aiv_vec = vec;
  d.aic_scalar = scalar;
  d.aic_mte2 = mte2;
  d.aiv_mte3 = mte3;
  d.aic_mte1 = d.aic_fixpipe = d.aiv_scalar = d.aiv_mte2 = 0;
  return d;
}

TEST(KernelDetails, ReaderKeepsOpStateBlockDimAndRatios) {
  REQUIRE_FIXTURE(kPmu);
  Trace t = read_trace(kPmu.string());
  ASSERT_EQ(t.kernel_details.size(), 29u);
  const Kernel* first = nullptr;  // the first MatMulV2 row (the earliest of them)
  for (const Kernel& k : t.kernels)
    if (t.str(k.name) == "aclnnMatmul_MatMulCommon_MatMulV2" && (!first || k.start_ns < first->start_ns)) first = &k;
  ASSERT_NE(first, nullptr);
  const Kernel& k = *first;
  ASSERT_NE(k.detail, kNone);
  const KernelDetail& d = t.kernel_details[k.detail];
  EXPECT_EQ(t.str(d.op_state), "dynamic");
  EXPECT_EQ(d.block_dim, 16);
  EXPECT_EQ(t.str(d.input_dtypes), "DT_BF16;DT_BF16");
  EXPECT_FLOAT_EQ(d.aic_mac, 0.824f);
  EXPECT_FLOAT_EQ(d.aic_mte2, 0.964f);
  EXPECT_FLOAT_EQ(d.aiv_vec, 0.f);
}

TEST(KernelDetails, OlderColumnsSplitByDtypeAreSummed) {
  REQUIRE_FIXTURE(kLegacy);
  Trace t = read_trace(kLegacy.string());
  ASSERT_FALSE(t.kernel_details.empty());
  bool some_vec = false;
  for (const KernelDetail& d : t.kernel_details) {
    EXPECT_TRUE(std::isnan(d.aic_mte2));  // no such column then
    some_vec = some_vec || d.aiv_vec > 0;
  }
  EXPECT_TRUE(some_vec);  // aiv_vec_fp32_ratio + aiv_vec_fp16_ratio + ...
}

TEST(Bound001, FixtureMatmulsAndAttentionWaitOnData) {
  REQUIRE_FIXTURE(kPmu);
  auto found = test::run_rule(bound001_rule(), read_trace(kPmu.string()));
  auto by_op = [&](std::string_view op) -> const Finding* {
    for (const Finding& f : found)
      if (f.location.op == op) return &f;
    return nullptr;
  };
  const Finding* mm = by_op("aclnnMatmul_MatMulV3Common_MatMulV3");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->severity, Severity::Warning);
  EXPECT_NE(mm->message.find("the cube waits for data (mte2 94%, mac 73%)"), std::string::npos) << mm->message;
  const Finding* fa = by_op("aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore");
  ASSERT_NE(fa, nullptr);
  // scalar 96 % runs alongside mte2 87 % (the ratios overlap): the cube's data feed holds it
  // back, as the advisor's FA rule (aic_mte2_ratio >= 0.8) says too.
  EXPECT_NE(fa->message.find("the cube waits for data (mte2 87%, mac 36%)"), std::string::npos) << fa->message;
  const Finding* grad = by_op("aclnnFlashAttentionScoreGrad_FlashAttentionScoreGrad_FlashAttentionScoreGrad");
  ASSERT_NE(grad, nullptr);
  EXPECT_EQ(grad->severity, Severity::Info);
  // MatMulV2 (mac 82 %) is compute-bound and Add (a vector op at mte2 84 %) is data-movement
  // bound by nature: neither is reported.
  for (const Finding& f : found) {
    EXPECT_EQ(f.location.op.find("MatMulV2"), std::string::npos) << f.message;
    EXPECT_EQ(f.location.op.find("Add"), std::string::npos) << f.message;
  }
}

TEST(Bound001, QuietOnComputeBoundAndWithoutTheDataMovementColumns) {
  EXPECT_TRUE(test::run_rule(bound001_rule(), task_with("MatMulV2", 500, ratios(0.9f, 0, 0.3f, 0.95f))).empty());
  EXPECT_TRUE(test::run_rule(bound001_rule(), task_with("Add", 500, ratios(0, 0.25f, 0.05f, 0.84f))).empty());
  KernelDetail legacy;  // mac and vec only
  legacy.aic_mac = 0.2f;
  legacy.aiv_vec = 0.1f;
  EXPECT_TRUE(test::run_rule(bound001_rule(), task_with("MatMulV2", 500, legacy)).empty());
  REQUIRE_FIXTURE(kLegacy);
  EXPECT_TRUE(test::run_rule(bound001_rule(), read_trace(kLegacy.string())).empty());
}

TEST(Bound001, ScalarBoundWhenTheDataFeedIsNotSaturated) {
  auto found = test::run_rule(bound001_rule(), task_with("Sort", 500, ratios(0.2f, 0.1f, 0.9f, 0.5f)));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("scalar unit is the bottleneck"), std::string::npos) << found[0].message;
  // the same scalar with mte2 saturated under a cube op: waiting on data
  found = test::run_rule(bound001_rule(), task_with("FlashAttentionScore", 500, ratios(0.36f, 0.6f, 0.96f, 0.87f)));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("the cube waits for data"), std::string::npos) << found[0].message;
}

TEST(Bound001, ShortOpsAreNotJudged) {
  // 10 us: launch-bound whatever its units do (the advisor's 20 us floor).
  EXPECT_TRUE(test::run_rule(bound001_rule(), task_with("MatMulV3", 10, ratios(0.3f, 0, 0.2f, 0.95f))).empty());
  auto found = test::run_rule(bound001_rule(), task_with("MatMulV3", 200, ratios(0.3f, 0, 0.2f, 0.95f)));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, int64_t(200'000 * (1 - 0.95)));
}

TEST(Fallback001, InputDtypesSayWhyATaskRanOnTheAiCpu) {
  TraceBuilder b;
  b.kernel("ReduceSum_AiCpu", 0, 150, {.kind = TaskKind::AiCpu});
  Trace t = b.build();
  t.kernels[0].detail = 0;
  KernelDetail d;
  d.input_dtypes = t.intern("DOUBLE;INT64");
  t.kernel_details.push_back(d);
  auto found = test::run_rule(fallback001_rule(), t);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find(": float64 inputs"), std::string::npos) << found[0].message;
  EXPECT_TRUE(found[0].fix.starts_with("Convert double to float")) << found[0].fix;
  REQUIRE_FIXTURE(kLegacy);
  // The legacy fixture's 7 trans_Cast tasks take INT32 inputs.
  found = test::run_rule(fallback001_rule(), read_trace(kLegacy.string()));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(std::find(found[0].notes.begin(), found[0].notes.end(), "input dtypes: INT32"), found[0].notes.end());
}

}  // namespace
}  // namespace npud
