// Chrome / Kineto JSON reader: real traces (shared fixtures) and small hand-written inputs.
#include <gtest/gtest.h>

#include <cctype>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "file_text.hpp"
#include "ingest/chrome_categories.hpp"
#include "ingest/chrome_json.hpp"
#include "ingest/decimal_time.hpp"
#include "util/input_error.hpp"
#include "ingest/reader.hpp"
#include "analysis/trace_index.hpp"
#include "model/trace.hpp"
#include "require_fixture.hpp"

namespace fs = std::filesystem;
using namespace npud;

namespace {

std::string kineto(const std::string& rel) { return std::string(NPUD_SHARED_DIR) + "/fixtures/kineto/" + rel; }
std::string trace_view() {
  return std::string(NPUD_SHARED_DIR) + "/fixtures/ascend/pt-trace-view-1step/trace_view.json";
}
std::string data(const std::string& rel) { return std::string(NPUD_TEST_DATA) + "/chrome/" + rel; }


size_t count_ops(const Trace& t, std::string_view name) {
  return size_t(std::count_if(t.ops.begin(), t.ops.end(), [&](const Op& o) { return t.str(o.name) == name; }));
}
size_t count_runtime(const Trace& t, std::string_view name) {
  return size_t(std::count_if(t.runtime.begin(), t.runtime.end(), [&](const RuntimeCall& r) { return t.str(r.name) == name; }));
}
const Op* find_op(const Trace& t, std::string_view name) {
  for (const Op& o : t.ops)
    if (t.str(o.name) == name) return &o;
  return nullptr;
}
bool has_step(const Trace& t, int64_t number) {
  return std::any_of(t.steps.begin(), t.steps.end(), [&](const Step& s) { return s.number == number; });
}

}  // namespace

// ---------------------------------------------------------------------------
// Exact decimal timestamps

TEST(DecimalTime, ParsesExactly) {
  int64_t v = 0;
  ASSERT_EQ(parse_us_to_ns("1704161511420306.491", v), DecimalStatus::Ok);
  EXPECT_EQ(v, 1704161511420306491);
  ASSERT_EQ(parse_us_to_ns("13.08", v), DecimalStatus::Ok);
  EXPECT_EQ(v, 13080);
  ASSERT_EQ(parse_us_to_ns("12.77012757357446", v), DecimalStatus::Ok);
  EXPECT_EQ(v, 12770);
  ASSERT_EQ(parse_us_to_ns("0.0005", v), DecimalStatus::Ok);
  EXPECT_EQ(v, 1);  // half rounds away from zero
  ASSERT_EQ(parse_us_to_ns("-2.5", v), DecimalStatus::Ok);
  EXPECT_EQ(v, -2500);
  ASSERT_EQ(parse_us_to_ns("1.5e3", v), DecimalStatus::Ok);
  EXPECT_EQ(v, 1500000);
  ASSERT_EQ(parse_us_to_ns("25E-4 ", v), DecimalStatus::Ok);
  EXPECT_EQ(v, 3);
  ASSERT_EQ(parse_us_to_ns("0e99999", v), DecimalStatus::Ok);
  EXPECT_EQ(v, 0);
  ASSERT_EQ(parse_us_to_ns("1e-400", v), DecimalStatus::Ok);
  EXPECT_EQ(v, 0);
  ASSERT_EQ(parse_us_to_ns("9223372036854775.807", v), DecimalStatus::Ok);
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_EQ(parse_us_to_ns("9223372036854775.808", v), DecimalStatus::OutOfRange);
  EXPECT_EQ(parse_us_to_ns("1e400", v), DecimalStatus::OutOfRange);
  EXPECT_EQ(parse_us_to_ns("99999999999999999999999", v), DecimalStatus::OutOfRange);
  EXPECT_EQ(parse_us_to_ns("", v), DecimalStatus::Invalid);
  EXPECT_EQ(parse_us_to_ns("abc", v), DecimalStatus::Invalid);
  EXPECT_EQ(parse_us_to_ns("1.2.3", v), DecimalStatus::Invalid);
  EXPECT_EQ(parse_us_to_ns("1e", v), DecimalStatus::Invalid);
}

// ---------------------------------------------------------------------------
// Every Kineto fixture reads, with the counts a Python json.load gives
// (ops = cpu_op + user_annotation minus ProfilerStep ranges; device = kernel, gpu_memcpy,
// gpu_memset, cuda_sync, mtia_ccp_events; runtime = *_runtime and *_driver).

struct FixtureCounts {
  const char* path;
  size_t ops, kernels, runtime, steps, memory;
};

class KinetoFixture : public ::testing::TestWithParam<FixtureCounts> {};

TEST_P(KinetoFixture, ReadsWithExpectedCounts) {
  const auto& c = GetParam();
  std::string path = kineto(c.path);
  REQUIRE_FIXTURE(path);
  Trace t = read_trace(path);
  EXPECT_EQ(t.format, InputFormat::KinetoJson);
  EXPECT_EQ(t.ops.size(), c.ops);
  EXPECT_EQ(t.kernels.size(), c.kernels);
  EXPECT_EQ(t.runtime.size(), c.runtime);
  EXPECT_EQ(t.steps.size(), c.steps);
  EXPECT_EQ(t.memory.size(), c.memory);
  EXPECT_GT(t.input_bytes, 0u);
  // relative times: the earliest event starts at 0, nothing is negative
  int64_t lo = INT64_MAX;
  for (const Op& o : t.ops) lo = std::min(lo, o.start_ns);
  for (const Kernel& k : t.kernels) lo = std::min(lo, k.start_ns);
  for (const RuntimeCall& r : t.runtime) lo = std::min(lo, r.start_ns);
  for (const Step& s : t.steps) lo = std::min(lo, s.start_ns);
  EXPECT_EQ(lo, 0);
  EXPECT_GT(t.time_origin_ns, 0);
  for (const Op& o : t.ops) ASSERT_GE(o.dur_ns, 0);
}

INSTANTIATE_TEST_SUITE_P(
    AllKinetoFixtures, KinetoFixture,
    ::testing::Values(
        FixtureCounts{"alexnet-sync/benchmark_result_2869224_1695835535_trace.json.gz", 367, 139, 361, 0, 0},
        FixtureCounts{"amd-shapes-strides/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 71, 16, 21, 2, 0},
        FixtureCounts{"callstack-legacy/rank_non_gpu.json.gz", 2466, 0, 0, 1, 0},
        FixtureCounts{"cpu-only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 14, 0, 0, 1, 0},
        FixtureCounts{"cupti-counters/benchmark_result_924719_1679055439_trace.json.gz", 383, 0, 1862, 0, 0},
        FixtureCounts{"diff-pair/control/control.json.gz", 40788, 9450, 24692, 6, 0},
        FixtureCounts{"diff-pair/test/test.json.gz", 31518, 15632, 21167, 6, 0},
        FixtureCounts{"event-sync-multistream/event_sync_trace.json.gz", 6, 11, 39, 0, 0},
        FixtureCounts{"event-sync/event_sync_trace.json.gz", 10, 9, 12, 1, 0},
        FixtureCounts{"large-16rank-rank0/rank0.json.gz", 25540, 7747, 33924, 5, 0},
        FixtureCounts{"large-memory-events/df_index_resolver.json.gz", 58710, 22290, 42373, 5, 28010},
        FixtureCounts{"mtia-nongpu-large/mtia_rank_0.json.gz", 109102, 25814, 3453, 1, 0},
        FixtureCounts{"multirank-sampled/sampled_rank-0.json.gz", 2400, 1204, 1204, 2, 0},
        FixtureCounts{"multirank-sampled/sampled_rank-1.json.gz", 2365, 1154, 1154, 2, 0},
        FixtureCounts{"nccl-comm/nccl_data.json.gz", 14385, 3774, 8740, 3, 0},
        FixtureCounts{"ns-resolution/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 23975, 6095, 15329, 5, 0},
        FixtureCounts{"triton-strides/triton_example.json.gz", 3, 1, 2, 1, 0}),
    // Test names from the fixture path ("event_sync_event_sync_trace"), not gtest's byte dump.
    [](const ::testing::TestParamInfo<FixtureCounts>& info) {
      std::string path = info.param.path;
      std::string name = path.substr(0, path.find(".json"));
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

// Runtime call names as the model keeps them: the API name, whose runtime, what it does.
TEST(RuntimeNames, VendorPrefixDroppedRuntimeKept) {
  using chrome::classify_runtime;
  auto acl = classify_runtime("AscendCL@aclrtSynchronizeStreamWithTimeout");
  EXPECT_EQ(acl.name, "aclrtSynchronizeStreamWithTimeout");
  EXPECT_EQ(acl.api, RuntimeApi::Acl);
  EXPECT_EQ(acl.kind, RuntimeKind::Sync);
  EXPECT_EQ(classify_runtime("AscendCL@aclrtMalloc").kind, RuntimeKind::Malloc);
  EXPECT_EQ(classify_runtime("aclrtMemcpy").api, RuntimeApi::Acl);
  auto cuda = classify_runtime("cudaMemcpyAsync");
  EXPECT_EQ(cuda.name, "cudaMemcpyAsync");
  EXPECT_EQ(cuda.api, RuntimeApi::Cuda);
  EXPECT_EQ(cuda.kind, RuntimeKind::Memcpy);
  auto driver = classify_runtime("cuStreamSynchronize");
  EXPECT_EQ(driver.api, RuntimeApi::CudaDriver);
  EXPECT_EQ(driver.kind, RuntimeKind::Sync);
  EXPECT_EQ(classify_runtime("hipLaunchKernel").api, RuntimeApi::Hip);
  EXPECT_EQ(classify_runtime("hipLaunchKernel").kind, RuntimeKind::Launch);
  EXPECT_EQ(classify_runtime("cudnnConvolutionForward").api, RuntimeApi::Other);
  // Another vendor's prefix is dropped too; its API is not taken for CUDA's by the name.
  auto other = classify_runtime("Vendor@cudaMemcpy");
  EXPECT_EQ(other.name, "cudaMemcpy");
  EXPECT_EQ(other.api, RuntimeApi::Other);
}

TEST(KinetoFacts, AlexnetSyncs) {
  std::string path = kineto("alexnet-sync/benchmark_result_2869224_1695835535_trace.json.gz");
  REQUIRE_FIXTURE(path);
  Trace t = read_trace(path);
  EXPECT_EQ(count_runtime(t, "cudaStreamSynchronize"), 16u);
  EXPECT_EQ(count_runtime(t, "cudaDeviceSynchronize"), 5u);
  size_t syncs = 0, launches = 0, waits_other = 0;
  for (const RuntimeCall& r : t.runtime) {
    syncs += r.kind == RuntimeKind::Sync;
    launches += r.kind == RuntimeKind::Launch;
    if (t.str(r.name) == "cudaStreamWaitEvent") waits_other += r.kind == RuntimeKind::Other;
    if (t.str(r.name).starts_with("cuda")) EXPECT_EQ(r.api, RuntimeApi::Cuda);
  }
  EXPECT_EQ(syncs, 21u);  // 16 stream + 5 device synchronizations
  EXPECT_EQ(launches, 79u);
  EXPECT_EQ(waits_other, 34u);  // a device-side wait, not a host sync
  size_t htod = 0, sync_records = 0;
  for (const Kernel& k : t.kernels) {
    if (k.kind == TaskKind::Memcpy && k.copy == CopyDir::HtoD) {
      ++htod;
      EXPECT_GT(k.bytes, 0);
    }
    if (k.kind == TaskKind::Sync) {
      ++sync_records;
      EXPECT_FALSE(t.str(k.task_type).empty());
    }
  }
  EXPECT_EQ(htod, 16u);
  EXPECT_EQ(sync_records, 41u);
  EXPECT_EQ(t.env_value("rank"), "0");
  EXPECT_EQ(t.env_value("device_name"), "NVIDIA A100-PG509-200");
  EXPECT_EQ(t.env_value("schema_version"), "1");
  EXPECT_EQ(t.env_value("device"), "cuda");
}

TEST(KinetoFacts, EventSyncItemChain) {
  std::string path = kineto("event-sync/event_sync_trace.json.gz");
  REQUIRE_FIXTURE(path);
  Trace t = read_trace(path);
  const Op* item = find_op(t, "aten::item");
  const Op* dense = find_op(t, "aten::_local_scalar_dense");
  ASSERT_NE(item, nullptr);
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(item->kind, OpKind::Aten);
  EXPECT_EQ(item->external_id, 521);
  EXPECT_EQ(item->dur_ns, 45000);
  // _local_scalar_dense runs inside item
  ASSERT_NE(dense->parent, kNone);
  EXPECT_EQ(&t.ops[dense->parent], item);
  auto dtoh = std::find_if(t.kernels.begin(), t.kernels.end(),
                           [](const Kernel& k) { return k.kind == TaskKind::Memcpy && k.copy == CopyDir::DtoH; });
  ASSERT_NE(dtoh, t.kernels.end());
  EXPECT_EQ(dtoh->bytes, 1);
  EXPECT_EQ(dtoh->correlation, 1511);
  EXPECT_EQ(dtoh->stream, 7);
  EXPECT_EQ(dtoh->device, 0);
  EXPECT_EQ(t.steps.size(), 1u);
}

TEST(KinetoFacts, AmdShapesAndStrides) {
  std::string path = kineto("amd-shapes-strides/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
  REQUIRE_FIXTURE(path);
  Trace t = read_trace(path);
  EXPECT_EQ(t.env_value("display_time_unit"), "ms");
  EXPECT_EQ(t.env_value("base_time_ns"), "1735632360000000000");
  EXPECT_EQ(t.env_value("device_name"), "AMD Radeon Graphics");
  EXPECT_TRUE(has_step(t, 1));
  EXPECT_TRUE(has_step(t, 2));
  // aten::broadcast_tensors takes one TensorList of two [5,128] tensors with strides [128,1]
  const Op* bt = find_op(t, "aten::broadcast_tensors");
  ASSERT_NE(bt, nullptr);
  auto in = t.inputs(*bt);
  ASSERT_EQ(in.size(), 2u);
  for (uint32_t ref : in) {
    const TensorMeta& m = t.tensors[ref];
    EXPECT_TRUE(m.is_tensor);
    ASSERT_TRUE(m.has_strides);
    EXPECT_EQ(std::vector<int64_t>(t.shape(m).begin(), t.shape(m).end()), (std::vector<int64_t>{5, 128}));
    EXPECT_EQ(std::vector<int64_t>(t.strides(m).begin(), t.strides(m).end()), (std::vector<int64_t>{128, 1}));
  }
  // aten::_foreach_add_: two tensor lists of 2 and a Scalar
  const Op* fa = find_op(t, "aten::_foreach_add_");
  ASSERT_NE(fa, nullptr);
  auto fin = t.inputs(*fa);
  ASSERT_EQ(fin.size(), 5u);
  const TensorMeta& scalar = t.tensors[fin[4]];
  EXPECT_FALSE(scalar.is_tensor);
  EXPECT_EQ(t.str(scalar.dtype), "Scalar");
  EXPECT_EQ(t.shape(t.tensors[fin[1]]).size(), 1u);
  // hipLaunchKernel is a launch, hipMemcpyWithStream a memcpy
  for (const RuntimeCall& r : t.runtime) {
    if (t.str(r.name) == "hipLaunchKernel") EXPECT_EQ(r.kind, RuntimeKind::Launch);
    if (t.str(r.name) == "hipMemcpyWithStream") EXPECT_EQ(r.kind, RuntimeKind::Memcpy);
    if (t.str(r.name).starts_with("hip")) EXPECT_EQ(r.api, RuntimeApi::Hip);
  }
  // base time + relative origin: absolute ns of the earliest event
  EXPECT_GT(t.time_origin_ns, int64_t(1735632360000000000));
}

TEST(KinetoFacts, NanosecondTimestampsAreExact) {
  std::string path = kineto("ns-resolution/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
  REQUIRE_FIXTURE(path);
  Trace t = read_trace(path);
  EXPECT_EQ(t.env_value("display_time_unit"), "ns");
  EXPECT_EQ(t.time_origin_ns, 1712195495502094565);
  // kernel at ts 1712195495505582.988, dur 4.928 (correlation 135071)
  auto k = std::find_if(t.kernels.begin(), t.kernels.end(), [](const Kernel& k) { return k.correlation == 135071; });
  ASSERT_NE(k, t.kernels.end());
  EXPECT_EQ(k->start_ns, 3488423);
  EXPECT_EQ(k->dur_ns, 4928);
  EXPECT_EQ(k->external_id, 112);
  // first aten::mm at ts 1712195495519875.890, dur 55.896 (External id 2071)
  auto mm = std::find_if(t.ops.begin(), t.ops.end(),
                         [&](const Op& o) { return t.str(o.name) == "aten::mm" && o.external_id == 2071; });
  ASSERT_NE(mm, t.ops.end());
  EXPECT_EQ(mm->start_ns, 17781325);
  EXPECT_EQ(mm->dur_ns, 55896);
  EXPECT_EQ(t.env_value("world_size"), "1");
  EXPECT_EQ(t.env_value("backend"), "nccl");
}

TEST(KinetoFacts, MemoryEvents) {
  std::string path = kineto("large-memory-events/df_index_resolver.json.gz");
  REQUIRE_FIXTURE(path);
  Trace t = read_trace(path);
  ASSERT_EQ(t.memory.size(), 28010u);
  bool saw = false;
  for (const MemoryEvent& m : t.memory) {
    if (m.bytes == 5242880 && m.total_allocated == 5435638784 && m.total_reserved == 12782141440) {
      saw = true;
      EXPECT_EQ(m.device, 1);
    }
  }
  EXPECT_TRUE(saw);
  EXPECT_EQ(t.env_value("rank"), "1");
  EXPECT_EQ(t.env_value("world_size"), "2");
}

TEST(KinetoFacts, NcclKernelsAreCommunication) {
  std::string path = kineto("nccl-comm/nccl_data.json.gz");
  REQUIRE_FIXTURE(path);
  Trace t = read_trace(path);
  size_t comm = 0;
  for (const Kernel& k : t.kernels) {
    if (k.kind == TaskKind::Communication) {
      ++comm;
      EXPECT_NE(t.str(k.name).find("ncclKernel"), std::string_view::npos) << t.str(k.name);
    }
  }
  EXPECT_GT(comm, 0u);
}

TEST(KinetoFacts, StepsFromProfilerStep) {
  std::string path = kineto("large-16rank-rank0/rank0.json.gz");
  REQUIRE_FIXTURE(path);
  Trace t = read_trace(path);
  EXPECT_EQ(count_ops(t, "aten::item"), 945u);
  EXPECT_EQ(count_runtime(t, "cudaStreamSynchronize"), 75u);
  ASSERT_EQ(t.steps.size(), 5u);
  for (size_t i = 1; i < t.steps.size(); ++i) EXPECT_LT(t.steps[i - 1].start_ns, t.steps[i].start_ns);
  // ops inside a step know it
  size_t in_step = std::count_if(t.ops.begin(), t.ops.end(), [](const Op& o) { return o.step_index >= 0; });
  EXPECT_GT(in_step, t.ops.size() / 2);
}

// ---------------------------------------------------------------------------
// torch_npu trace_view.json

TEST(TraceView, AscendProcessesAreMapped) {
  std::string path = trace_view();
  REQUIRE_FIXTURE(path);
  Trace t = read_trace(path);
  EXPECT_EQ(t.format, InputFormat::KinetoJson);
  EXPECT_EQ(t.env_value("device"), "npu");
  size_t aicpu = 0;
  for (const Kernel& k : t.kernels)
    if (k.kind == TaskKind::AiCpu) {
      ++aicpu;
      EXPECT_EQ(t.str(k.task_type), "AI_CPU");
      EXPECT_EQ(k.stream, 3);
    }
  EXPECT_EQ(aicpu, 2u);
  EXPECT_EQ(t.kernels.size(), 276u);
  // "AscendCL@aclrtSynchronizeStream" as recorded: the API name, AscendCL's.
  EXPECT_EQ(count_runtime(t, "aclrtSynchronizeStream"), 4u);
  EXPECT_EQ(count_runtime(t, "aclopCompileAndExecute"), 11u);
  size_t syncs = 0, memcpys = 0;
  for (const RuntimeCall& r : t.runtime) {
    syncs += r.kind == RuntimeKind::Sync;
    memcpys += r.kind == RuntimeKind::Memcpy;
    EXPECT_EQ(r.api, RuntimeApi::Acl) << t.str(r.name);
    EXPECT_FALSE(t.str(r.name).starts_with("AscendCL@"));
    if (t.str(r.name) == "aclopCompileAndExecute") EXPECT_EQ(r.kind, RuntimeKind::Other);
  }
  EXPECT_EQ(syncs, 8u);  // 4 SynchronizeStream + 2 SynchronizeDevice + 2 SynchronizeStreamWithTimeout
  EXPECT_EQ(memcpys, 6u);
  EXPECT_EQ(count_ops(t, "aten::item"), 45u);
  EXPECT_EQ(count_ops(t, "aten::_local_scalar_dense"), 45u);
  ASSERT_TRUE(has_step(t, 1));
  // string timestamps are exact: the earliest event is ProfilerStep#1 at "1704161511420289.011"
  EXPECT_EQ(t.time_origin_ns, 1704161511420289011);
  EXPECT_EQ(t.steps[0].start_ns, 0);
  EXPECT_EQ(t.steps[0].dur_ns, 14091970);
  // Overlap Analysis ranges are not kernels or ops
  EXPECT_EQ(count_ops(t, "Computing"), 0u);
}

// ---------------------------------------------------------------------------
// Hand-written inputs

TEST(ChromeSmall, ObjectFormWithMetadata) {
  Trace t = read_trace(data("small_object.json"));
  EXPECT_EQ(t.format, InputFormat::KinetoJson);
  EXPECT_EQ(t.env_value("device_name"), "Test GPU");
  EXPECT_EQ(t.env_value("rank"), "3");
  EXPECT_EQ(t.env_value("world_size"), "8");
  EXPECT_EQ(t.env_value("backend"), "nccl");
  EXPECT_EQ(t.env_value("display_time_unit"), "ms");  // recorded, does not change units
  EXPECT_EQ(t.env_value("base_time_ns"), "1700000000000000000");
  EXPECT_EQ(t.time_origin_ns, 1700000000000000000 + 1000000);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].number, 7);
  EXPECT_EQ(t.steps[0].dur_ns, 500000);
  ASSERT_EQ(t.ops.size(), 1u);
  const Op& mm = t.ops[0];
  EXPECT_EQ(mm.start_ns, 10000);
  EXPECT_EQ(mm.step_index, 0);
  ASSERT_EQ(mm.inputs_count, 2u);
  const TensorMeta& b = t.tensors[t.inputs(mm)[1]];
  EXPECT_EQ(t.str(b.dtype), "float");
  EXPECT_EQ(std::vector<int64_t>(t.shape(b).begin(), t.shape(b).end()), (std::vector<int64_t>{8, 2}));
  EXPECT_FALSE(is_contiguous(t.shape(b), t.strides(b)));
  ASSERT_EQ(t.runtime.size(), 3u);
  EXPECT_EQ(t.runtime[0].kind, RuntimeKind::Launch);
  EXPECT_EQ(t.runtime[1].kind, RuntimeKind::Memcpy);
  EXPECT_EQ(t.runtime[2].kind, RuntimeKind::Sync);
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.kernels[1].copy, CopyDir::DtoH);
  EXPECT_EQ(t.kernels[1].bytes, 64);
  ASSERT_EQ(t.memory.size(), 1u);
  EXPECT_EQ(t.memory[0].bytes, 4096);
  // the unknown category is skipped, with one warning naming it
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].message.find("some_future_category"), std::string::npos);
  EXPECT_GT(t.warnings[0].offset, 0u);
}

TEST(ChromeSmall, GzipGivesTheSameTrace) {
  Trace a = read_trace(data("small_object.json"));
  Trace b = read_trace(data("small_object.json.gz"));
  EXPECT_EQ(a.ops.size(), b.ops.size());
  EXPECT_EQ(a.kernels.size(), b.kernels.size());
  EXPECT_EQ(a.runtime.size(), b.runtime.size());
  EXPECT_EQ(a.time_origin_ns, b.time_origin_ns);
  EXPECT_EQ(a.input_bytes, b.input_bytes);
  EXPECT_EQ(a.input_bytes, fs::file_size(data("small_object.json")));
}

TEST(ChromeSmall, ArrayFormWithoutClosingBracket) {
  Trace t = read_trace(data("array_no_close.json"));
  ASSERT_EQ(t.ops.size(), 1u);
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].start_ns, 2500);
  EXPECT_EQ(t.kernels[0].dur_ns, 1250);
  EXPECT_TRUE(t.warnings.empty());
}

TEST(ChromeSmall, StringTimestamps) {
  Trace t = read_trace(data("string_ts.json"));
  ASSERT_EQ(t.ops.size(), 2u);
  EXPECT_EQ(t.time_origin_ns, 1704161511420306491);
  EXPECT_EQ(t.ops[0].dur_ns, 13080);
  EXPECT_EQ(t.ops[1].start_ns, 1704161511420569934 - 1704161511420306491);  // .9335 rounds up
  EXPECT_EQ(t.ops[1].dur_ns, 89811);
}

TEST(ChromeSmall, BeginEndPairs) {
  Trace t = read_trace(data("begin_end.json"));
  ASSERT_EQ(t.ops.size(), 3u);
  const Op* outer = find_op(t, "outer");
  const Op* inner = find_op(t, "inner");
  const Op* other = find_op(t, "other_thread");
  ASSERT_TRUE(outer && inner && other);
  EXPECT_EQ(outer->dur_ns, 100000);
  EXPECT_EQ(inner->dur_ns, 20000);
  EXPECT_EQ(other->dur_ns, 25500);
  EXPECT_EQ(&t.ops[inner->parent], outer);
  EXPECT_TRUE(t.warnings.empty());
}

TEST(ChromeSmall, CaptureWithCutOffLastLine) {
  std::string path = data("capture_cut.npud.json");
  EXPECT_EQ(detect_format(path), InputFormat::Capture);
  Trace t = read_trace(path);
  EXPECT_EQ(t.format, InputFormat::Capture);
  EXPECT_EQ(t.env_value("torch"), "1.13.1");
  EXPECT_EQ(t.env_value("python"), "3.11.2");
  EXPECT_EQ(t.env_value("device"), "cpu");
  EXPECT_EQ(t.env_value("argv"), "train.py --lr 1e-3");
  ASSERT_EQ(t.ops.size(), 4u);  // the cut-off aten::sum is dropped
  ASSERT_EQ(t.warnings.size(), 1u);
  std::string text = test::file_text(path);
  EXPECT_EQ(t.warnings[0].offset, text.rfind("{\"ph\""));
  // step 1 has a ProfilerStep event; step 2 was cut off: no step, its ops outside any step, so
  // per-step rates stay over complete steps (issue 31 F-9)
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].number, 1);
  EXPECT_EQ(t.capture.unended_step, 2);
  EXPECT_GT(t.capture.unended_step_ops, 0u);
  for (const Op& op : t.ops) EXPECT_TRUE(op.step_index == 0 || op.step_index == -1);
  const Op* add = find_op(t, "aten::add.Tensor");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->step_index, 0);
  EXPECT_EQ(add->sequence, 17);
  EXPECT_EQ(t.str(add->module), "model.blocks.0.mlp");
  const Frame* f = t.user_frame(*add);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(t.str(f->file), "train.py");
  EXPECT_EQ(f->line, 42);
  EXPECT_EQ(t.str(f->function), "forward");
  ASSERT_EQ(add->inputs_count, 1u);
  ASSERT_EQ(add->outputs_count, 1u);
  const TensorMeta& out = t.tensors[t.outputs(*add)[0]];
  EXPECT_EQ(out.id, 9);
  EXPECT_EQ(out.storage, 7);
  EXPECT_EQ(t.str(out.dtype), "float32");
  EXPECT_EQ(t.str(out.device), "cpu");
  const Op* mul = find_op(t, "aten::mul.Tensor");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->step_index, -1);   // in the cut-off step 2
  EXPECT_EQ(mul->stack, add->stack);  // identical stacks are stored once
  const TensorMeta& in = t.tensors[t.inputs(*mul)[0]];
  EXPECT_FALSE(is_contiguous(t.shape(in), t.strides(in)));
  const Op* item = find_op(t, "Tensor.item");
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, OpKind::PythonSync);
  EXPECT_EQ(t.str(item->detail), "copies one element to the host");
  EXPECT_EQ(t.shape(t.tensors[t.inputs(*item)[0]]).size(), 0u);
}

TEST(ChromeSmall, BufferVariantAndLegacyCallStack) {
  std::string json = R"([{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":5,"dur":2,
    "args":{"Call stack":"/usr/lib/python3/site-packages/torch/nn/modules/linear.py(114): forward;/home/u/train.py(30): step;/home/u/train.py(50): <module>",
            "Module Hierarchy":"top.fc"}}])";
  Trace t = read_chrome_json_buffer(json, "mem.json", {});
  EXPECT_EQ(t.source, "mem.json");
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(t.str(t.ops[0].module), "top.fc");
  const Frame* f = t.user_frame(t.ops[0]);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(t.str(f->file), "/home/u/train.py");  // torch's own frame is not the user's
  EXPECT_EQ(f->line, 30);
  EXPECT_EQ(t.str(f->function), "step");
  EXPECT_EQ(t.frames_of(t.ops[0].stack).size(), 2u);
}

// Kineto's python_function events give their file:line; a running script's `<module>` event
// names where it was when the profiler started, so its frame is `enclosing` (issue 40), and
// only its own: a "Call stack" naming the same file:line means that line (review of f1adf22).
TEST(ChromeSmall, PythonFunctionFramesAndTheEnclosingModuleLine) {
  std::string json = R"([
    {"ph":"X","cat":"python_function","name":"train.py(311): <module>","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"python_function","name":"transformers/models/llama/modeling_llama.py(130): rotate_half",
     "pid":1,"tid":1,"ts":10,"dur":20},
    {"ph":"X","cat":"python_function","name":"torch/nn/modules/module.py(1750): _call_impl","pid":1,"tid":1,"ts":12,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::cat","pid":1,"tid":1,"ts":13,"dur":2},
    {"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":1,"ts":40,"dur":2},
    {"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":2,"ts":40,"dur":2,"args":{"Call stack":"train.py(311): <module>"}}])";
  Trace t = read_chrome_json_buffer(json, "mem.json", {});
  const Op* item = find_op(t, "aten::item");
  const Op* cat = find_op(t, "aten::cat");
  const Op* mul = find_op(t, "aten::mul");
  ASSERT_TRUE(item && cat && mul);
  TraceIndex index(t);
  auto frame_of = [&](const Op* op) { return &t.frames[index.stack_frames(uint32_t(op - t.ops.data()))[0]]; };
  const Frame* module_frame = frame_of(item);
  EXPECT_EQ(t.str(module_frame->file), "train.py");
  EXPECT_EQ(module_frame->line, 311);
  EXPECT_TRUE(module_frame->enclosing);
  // inside transformers: the package's frame (torch's _call_impl gives none)
  const Frame* package = frame_of(cat);
  EXPECT_EQ(t.str(package->file), "transformers/models/llama/modeling_llama.py");
  EXPECT_EQ(t.str(package->function), "rotate_half");
  // the legacy "Call stack" frame of the same text is the op's own line
  const Frame* legacy = frame_of(mul);
  EXPECT_EQ(legacy->line, 311);
  EXPECT_FALSE(legacy->enclosing);
}

TEST(ChromeSmall, ProgressIsReported) {
  std::string path = kineto("multirank-sampled/sampled_rank-0.json.gz");
  REQUIRE_FIXTURE(path);
  ReadOptions opts;
  uint64_t last = 0, total = 0, calls = 0;
  opts.progress = [&](uint64_t done, uint64_t all) {
    ++calls;
    last = done;
    total = all;
  };
  read_trace(path, opts);
  EXPECT_GT(calls, 0u);
  EXPECT_EQ(total, fs::file_size(path));
  EXPECT_EQ(last, total);
}
