// torch_npu profiler output reader and the CSV reader under it: real fixtures from
// ../shared/fixtures/ascend (skipped when absent) and small hand-made trees in
// tests/data/ascend.
#include <gtest/gtest.h>

#include "analysis/trace_index.hpp"
#include "ingest/communication_json.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "ingest/ascend.hpp"
#include "ingest/byte_source.hpp"
#include "ingest/chrome_json.hpp"
#include "ingest/csv.hpp"
#include "util/input_error.hpp"
#include "scratch_path.hpp"
#include "require_fixture.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(NPUD_SHARED_DIR) / "fixtures" / "ascend";
const fs::path kData = fs::path(NPUD_TEST_DATA) / "ascend";


size_t count_kind(const Trace& t, TaskKind k) {
  return size_t(std::count_if(t.kernels.begin(), t.kernels.end(), [&](const Kernel& x) { return x.kind == k; }));
}

const Kernel* kernel_named(const Trace& t, std::string_view name) {
  for (const Kernel& k : t.kernels)
    if (t.str(k.name) == name) return &k;
  return nullptr;
}

std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  CsvReader r(memory_byte_source(text, "mem.csv"), "mem.csv");
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> row;
  while (r.next(row)) out.push_back(row);
  return out;
}

InputError csv_error(std::string_view text) {
  try {
    parse_csv(text);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for: " << text;
  return InputError("", 0, "");
}

// ---- CSV reader ----

TEST(Csv, QuotesTabsNewlinesCrlfBom) {
  auto rows = parse_csv("\xEF\xBB\xBF" "a,b,c\r\n\"x,1\",\"say \"\"hi\"\"\",\"12.5\t\"\r\n\r\n\"two\nlines\",,end");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"x,1", "say \"hi\"", "12.5\t"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"two\nlines", "", "end"}));
}

TEST(Csv, KernelDetailsShapeQuoting) {
  // kernel_details.csv writes shapes as """4,1025;2;2""": the value keeps its inner quotes.
  auto rows = parse_csv("Input Shapes,T\n\"\"\"4,1025;2;2\"\"\",INT32\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], "\"4,1025;2;2\"");
}

TEST(Csv, OffsetsAndLines) {
  CsvReader r(memory_byte_source("h1,h2\n\"a\nb\",c\nd,e\n", "m.csv"), "m.csv");
  std::vector<std::string> row;
  ASSERT_TRUE(r.next(row));
  ASSERT_TRUE(r.next(row));
  EXPECT_EQ(r.record_offset(), 6u);
  EXPECT_EQ(r.field_offset(1), 12u);
  EXPECT_EQ(r.line(), 2u);
  ASSERT_TRUE(r.next(row));
  EXPECT_EQ(r.line(), 4u);  // the quoted line break counts
  EXPECT_FALSE(r.next(row));
}

TEST(Csv, Errors) {
  InputError e = csv_error("a,b\n1,\"open\n");
  EXPECT_EQ(e.offset(), 6u);
  EXPECT_NE(std::string(e.what()).find("unterminated"), std::string::npos);
  e = csv_error("a,b\n\"x\"y,2\n");
  EXPECT_EQ(e.offset(), 7u);
  EXPECT_EQ(e.file(), "mem.csv");
}

// ---- lone kernel_details.csv (real fixtures) ----

TEST(Ascend, KernelDetailsFp16Legacy) {
  fs::path p = kFixtures / "pt-kernel-details-fp16-legacy-pmu" / "kernel_details.csv";
  REQUIRE_FIXTURE(p);
  Trace t = read_ascend(p.string(), {});
  EXPECT_EQ(t.format, InputFormat::AscendCsv);
  EXPECT_EQ(t.env_value("device"), "npu");
  ASSERT_EQ(t.kernels.size(), 591u);
  EXPECT_EQ(count_kind(t, TaskKind::AiCpu), 7u);            // AI_CPU rows (SOURCE.md: 7)
  EXPECT_EQ(count_kind(t, TaskKind::Communication), 19u);   // HCCL rows (SOURCE.md: 19)
  EXPECT_EQ(count_kind(t, TaskKind::Kernel), 565u);         // AI_VECTOR_CORE 520 + MIX_AIV 25 + AI_CORE 13 + DSA_SQE 7
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].number, 1);
  // Exact decimal conversion: first start 1699529622790614.8 us, last end 1699529623307500.34 us.
  EXPECT_EQ(t.time_origin_ns, 1699529622790614800);
  EXPECT_EQ(t.steps[0].start_ns, 0);
  EXPECT_EQ(t.steps[0].dur_ns, 516885540);
  const Kernel* z = kernel_named(t, "ZerosLike46");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->start_ns, 0);
  EXPECT_EQ(z->dur_ns, 607980);
  EXPECT_EQ(z->stream, 16);
  EXPECT_EQ(t.str(z->task_type), "AI_VECTOR_CORE");
  const Kernel* h = kernel_named(t, "hcom_broadcast__445_0");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->stream, -1);  // N/A
  for (const Kernel& k : t.kernels) EXPECT_EQ(k.step_index, 0);
  int64_t total = 0;
  for (const Kernel& k : t.kernels) total += k.dur_ns;
  EXPECT_EQ(total, 396807040);  // sum of Duration(us), exact
}

TEST(Ascend, KernelDetailsBf16TabInQuotes) {
  fs::path p = kFixtures / "pt-kernel-details-pmu-bf16" / "kernel_details.csv";
  REQUIRE_FIXTURE(p);
  Trace t = read_ascend(p.string(), {});
  ASSERT_EQ(t.kernels.size(), 29u);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].number, 19);
  EXPECT_EQ(t.steps[0].dur_ns, 2857120405);
  const Kernel* m = kernel_named(t, "aclnnMatmul_MatMulCommon_MatMulV2");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(t.time_origin_ns + m->start_ns, 1736413971558972912);  // "1736413971558972.912\t"
  EXPECT_EQ(m->dur_ns, 185504);
  EXPECT_EQ(m->stream, 2);
  EXPECT_EQ(count_kind(t, TaskKind::Kernel), 29u);  // AI_CORE, MIX_AIC, AI_VECTOR_CORE
}

TEST(Ascend, KernelDetailsMinimalNA) {
  fs::path p = kFixtures / "pt-kernel-details-minimal" / "test.csv";
  REQUIRE_FIXTURE(p);
  Trace t = read_ascend(p.string(), {});
  ASSERT_EQ(t.kernels.size(), 8u);
  EXPECT_EQ(count_kind(t, TaskKind::Kernel), 8u);
  EXPECT_TRUE(t.steps.empty());  // no Step Id column
  EXPECT_EQ(t.str(t.kernels[0].task_type), "N/A");
  EXPECT_EQ(t.str(t.kernels[0].name), "Cast16");
  EXPECT_EQ(t.kernels[0].dur_ns, 932050);  // 932.0498 us rounded to ns
}

// ---- directories ----

TEST(Ascend, DirectoryMergesTraceViewAndCsv) {
  fs::path root = kData / "matched_ascend_pt";
  for (fs::path p : {root, root / "ASCEND_PROFILER_OUTPUT"}) {
    Trace t = read_ascend(p.string(), {});
    EXPECT_EQ(t.format, InputFormat::AscendDir);
    EXPECT_EQ(t.env_value("device"), "npu");
    // 3 kernels in trace_view; the CSV's HCCL row matches none and is not added.
    ASSERT_EQ(t.kernels.size(), 3u) << p;
    const Kernel* cast = kernel_named(t, "aclnnCast_CastAiCpu_Cast");
    ASSERT_NE(cast, nullptr);
    EXPECT_EQ(cast->kind, TaskKind::AiCpu);  // trace_view said "Other"; the CSV's core says AI_CPU
    EXPECT_EQ(t.str(cast->task_type), "AI_CPU");
    const Kernel* add = kernel_named(t, "aclnnAdd_AddAiCore_Add");
    ASSERT_NE(add, nullptr);
    EXPECT_EQ(t.str(add->task_type), "AI_VECTOR_CORE");
    EXPECT_EQ(add->kind, TaskKind::Kernel);
    const Kernel* mm = kernel_named(t, "aclnnMatmul_MatMulCommon_MatMulV2");
    ASSERT_NE(mm, nullptr);
    EXPECT_EQ(mm->dur_ns, 185504);
    // Step 5 synthesized from the rows' Step Id (trace_view has no ProfilerStep here).
    ASSERT_EQ(t.steps.size(), 1u);
    EXPECT_EQ(t.steps[0].number, 5);
    for (const Kernel& k : t.kernels) EXPECT_EQ(k.step_index, 0);
    bool warned = std::any_of(t.warnings.begin(), t.warnings.end(), [](const Warning& w) {
      return w.message.find("1 of 4 rows match no trace_view.json kernel") != std::string::npos;
    });
    EXPECT_TRUE(warned);
    EXPECT_EQ(t.env_value("npu_step_trace_steps"), "1");
    EXPECT_EQ(t.env_value("npu_free_us"), "118.042");
    EXPECT_EQ(t.env_value("npu_computing_us"), "327.754");
    EXPECT_EQ(t.env_value("npu_op_statistic_aicpu_us"), "139.000");
  }
}

TEST(Ascend, RealTraceViewWithCsvNoDuplicates) {
  fs::path tv = kFixtures / "pt-trace-view-1step" / "trace_view.json";
  fs::path kd = kFixtures / "pt-kernel-details-fp16-legacy-pmu" / "kernel_details.csv";
  REQUIRE_FIXTURE(tv);
  REQUIRE_FIXTURE(kd);
  fs::path tmp = fs::temp_directory_path() / ("npud_ascend_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" + std::to_string(reinterpret_cast<uintptr_t>(&tmp)));
  fs::path out = tmp / "x_ascend_pt" / "ASCEND_PROFILER_OUTPUT";
  fs::create_directories(out);
  fs::create_symlink(tv, out / "trace_view.json");
  fs::create_symlink(kd, out / "kernel_details.csv");
  Trace alone = read_chrome_json(tv.string(), {});
  Trace t = read_ascend((tmp / "x_ascend_pt").string(), {});
  // Also through the parent directory (a folder of runs).
  Trace via_parent = read_ascend(tmp.string(), {});
  fs::remove_all(tmp);
  ASSERT_GT(alone.kernels.size(), 0u);
  EXPECT_EQ(t.kernels.size(), alone.kernels.size());  // the CSV (another run) adds nothing
  EXPECT_EQ(via_parent.kernels.size(), alone.kernels.size());
  EXPECT_EQ(t.ops.size(), alone.ops.size());
  EXPECT_EQ(t.format, InputFormat::AscendDir);
}

// trace_view's async_npu flows tie each device task to the op that launched it: the two
// AI_CPU Cast tasks belong to aten::to and aten::sum (SOURCE.md: aclnnCast_CastAiCpu_Cast,
// aclnnReduceSum_CastAiCpu_Cast).
TEST(Ascend, TraceViewTasksFindTheOpThatLaunchedThem) {
  fs::path tv = kFixtures / "pt-trace-view-1step" / "trace_view.json";
  REQUIRE_FIXTURE(tv);
  Trace t = read_chrome_json(tv.string(), {});
  TraceIndex idx(t);
  size_t linked = 0;
  std::map<std::string, std::string> aicpu_op;
  for (const Kernel& k : t.kernels) {
    uint32_t op = idx.op_of_kernel(k);
    if (op == kNone) continue;
    ++linked;
    if (k.kind == TaskKind::AiCpu) aicpu_op[std::string(t.str(k.name))] = std::string(t.str(t.ops[idx.top_aten(op)].name));
  }
  EXPECT_GE(linked, 270u);  // of 276 (a task whose flow start lies in no op stays unlinked)
  EXPECT_EQ(aicpu_op["aclnnCast_CastAiCpu_Cast"], "aten::to");
  EXPECT_EQ(aicpu_op["aclnnReduceSum_CastAiCpu_Cast"], "aten::sum");
}

// msprof's per-rank communication.json: waits per step over collective and p2p ops; the
// "Total Op Info" entries repeat their ops' sums and are not added again.
TEST(Ascend, CommunicationJsonWaitsPerStep) {
  fs::path p = test::scratch_path("npud_test_communication", ".json");
  std::ofstream(p) << R"json({"step3": {"collective": {
      "hcom_allReduce__1_0@9": {"Communication Time Info": {"Wait Time(ms)": 1.5, "Transit Time(ms)": 0.25, "Elapse Time(ms)": 2}},
      "Total Op Info": {"Communication Time Info": {"Wait Time(ms)": 100, "Transit Time(ms)": 100, "Elapse Time(ms)": 100}}},
    "p2p": {"hcom_send__1_1@9": {"Communication Time Info": {"Wait Time(ms)": 0.5, "Transit Time(ms)": 0.75}}}},
    "step4": {"collective": {}}})json";
  std::vector<CommStepTime> t = read_rank_communication(p.string());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].step_number, 3);
  EXPECT_EQ(t[0].wait_ns, 2'000'000);
  EXPECT_EQ(t[0].transit_ns, 1'000'000);
  EXPECT_EQ(t[0].elapse_ns, 2'000'000);
  EXPECT_EQ(t[1].step_number, 4);
  EXPECT_EQ(t[1].wait_ns, 0);
  std::ofstream(p) << R"json({"step3": )json";
  EXPECT_THROW(read_rank_communication(p.string()), InputError);
  std::ofstream(p) << R"json([1, 2])json";
  EXPECT_THROW(read_rank_communication(p.string()), InputError);
  fs::remove(p);
}

TEST(Ascend, SeveralRanksReadsFirstAndWarns) {
  Trace t = read_ascend((kData / "two_ranks").string(), {});
  ASSERT_EQ(t.kernels.size(), 3u);
  EXPECT_NE(kernel_named(t, "rank0_MatMul"), nullptr);
  EXPECT_EQ(kernel_named(t, "rank1_MatMul"), nullptr);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.steps[0].number, 1);
  EXPECT_EQ(t.steps[1].number, 2);
  EXPECT_EQ(t.steps[0].dur_ns, 21000);  // 0.5 us .. 21.5 us
  bool warned = std::any_of(t.warnings.begin(), t.warnings.end(), [](const Warning& w) {
    return w.message.find("2 profiler outputs") != std::string::npos;
  });
  EXPECT_TRUE(warned);
}

TEST(Ascend, CrlfBomQuotedNames) {
  Trace t = read_ascend((kData / "crlf_bom.csv").string(), {});
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_NE(kernel_named(t, "Mat\"Mul, fused"), nullptr);
  const Kernel* ml = kernel_named(t, "multi\r\nline");
  ASSERT_NE(ml, nullptr);
  EXPECT_EQ(ml->kind, TaskKind::AiCpu);
  EXPECT_EQ(ml->start_ns, 19500);
}

// ---- bad input ----

InputError ascend_error(const fs::path& p) {
  try {
    read_ascend(p.string(), {});
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << p;
  return InputError("", 0, "");
}

TEST(Ascend, BadCsvNamesFileAndOffset) {
  InputError e = ascend_error(kData / "bad" / "unterminated_quote.csv");
  EXPECT_EQ(e.file(), (kData / "bad" / "unterminated_quote.csv").string());
  EXPECT_TRUE(e.has_offset());
  EXPECT_EQ(e.offset(), 79u);  // the opening quote
  EXPECT_NE(std::string(e.what()).find("unterminated"), std::string::npos);

  e = ascend_error(kData / "bad" / "wrong_column_count.csv");
  EXPECT_EQ(e.offset(), 104u);  // start of line 3
  EXPECT_NE(std::string(e.what()).find("4 fields, but the header has 5"), std::string::npos) << e.what();

  e = ascend_error(kData / "bad" / "bad_duration.csv");
  EXPECT_EQ(e.offset(), 139u);  // the "fast" field
  EXPECT_NE(std::string(e.what()).find("Duration(us): not a number: 'fast'"), std::string::npos) << e.what();
  EXPECT_NE(e.describe().find("bad_duration.csv: byte 139:"), std::string::npos) << e.describe();
}

TEST(Ascend, NotAProfilerOutput) {
  InputError e = ascend_error(kData / "bad");
  EXPECT_FALSE(e.has_offset());
  EXPECT_NE(std::string(e.what()).find("not a torch_npu profiler output"), std::string::npos);
  e = ascend_error(kData / "no_such_dir");
  EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos);
}

}  // namespace
}  // namespace npud
