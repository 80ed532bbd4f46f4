// SYNC001 host-device-sync on hand-written traces.
#include <algorithm>
#include <gtest/gtest.h>

#include "rules/builtin_rules.hpp"
#include "trace_builder.hpp"

namespace npud {
namespace {

using test::TraceBuilder;

std::vector<Finding> sync(const Trace& t) { return test::run_rule(sync001_rule(), t); }

TEST(Sync001, CleanTraceHasNoFinding) {
  TraceBuilder b;
  b.step(1, 0, 1000);
  b.op("aten::linear", 10, 100).op("aten::addmm", 20, 80, {.external_id = 1});
  b.runtime("cudaLaunchKernel", RuntimeKind::Launch, 30, 5, {.correlation = 11, .external_id = 1});
  b.kernel("gemm", 40, 300, {.correlation = 11});
  b.op("aten::add", 200, 20);
  b.kernel("Memcpy HtoD", 300, 10, {.kind = TaskKind::Memcpy, .copy = CopyDir::HtoD});
  EXPECT_TRUE(sync(b.build()).empty());
}

// One loss.item() per step at train.py:95, with the aten op, its _local_scalar_dense child and
// the runtime copy + sync calls inside: one finding, the runtime sync is not counted twice.
TEST(Sync001, ItemEveryStepIsOneErrorFinding) {
  TraceBuilder b;
  for (int s = 0; s < 3; ++s) {
    double base = s * 1000.0;
    b.step(s + 1, base, 1000);
    b.op("aten::mm", base + 10, 50);
    b.op("aten::item", base + 100, 200, {.file = "train.py", .line = 95});
    b.op("aten::_local_scalar_dense", base + 110, 180);
    b.runtime("cudaMemcpyAsync", RuntimeKind::Memcpy, base + 120, 10);
    b.runtime("cudaStreamSynchronize", RuntimeKind::Sync, base + 140, 140);
  }
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "SYNC001");
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].location.file, "train.py");
  EXPECT_EQ(f[0].location.line, 95);
  EXPECT_EQ(f[0].location.op, "aten::item");
  EXPECT_EQ(f[0].metric("count"), 3);
  EXPECT_EQ(f[0].metric("per_step"), 1);
  EXPECT_EQ(f[0].metric("time_ns"), 3 * 200000);
  EXPECT_DOUBLE_EQ(f[0].metric("time_share"), 0.2);
  EXPECT_EQ(f[0].cost_ns, 600000);
  EXPECT_NE(f[0].message.find("aten::item at train.py:95"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("3 host-device syncs (1/step)"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].fix.find(".item()"), std::string::npos);
}

// A profile whose device reads go through the CUDA driver API (a library calling cuMemcpy and
// cuStreamSynchronize itself): the read with driver calls inside waits for the device; the
// item() without any read a host tensor.
TEST(Sync001, DriverApiCallsAreDeviceWaitsToo) {
  TraceBuilder b;
  for (int s = 0; s < 2; ++s) {
    double base = s * 1000.0;
    b.step(s + 1, base, 1000);
    b.op("aten::item", base + 100, 200, {.file = "train.py", .line = 95});
    b.op("aten::_local_scalar_dense", base + 110, 180);
    b.runtime("cuMemcpyDtoHAsync_v2", RuntimeKind::Memcpy, base + 120, 10);
    b.runtime("cuStreamSynchronize", RuntimeKind::Sync, base + 140, 140);
    b.op("aten::item", base + 400, 5, {.file = "train.py", .line = 120});
  }
  Trace t = b.build();
  ASSERT_EQ(t.runtime.front().api, RuntimeApi::CudaDriver);
  auto f = sync(t);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.line, 95);
}

// `--steps all`: step 0 runs from the program's start to the first optimizer.step(), so a
// `.item()` after optimizer.step() first lands in step 1. The rate over steps 1..N is the loop's:
// the same 1/step and severity as a recording of steps 1:3 (issue 31 F-9).
TEST(Sync001, CaptureStepZeroIsLeftOutOfTheRate) {
  TraceBuilder b;
  b.capture();
  for (int s = 0; s < 4; ++s) b.step(s, s * 1000.0, 1000);
  for (int s = 1; s < 4; ++s) b.op("aten::item", s * 1000.0 + 10, 5, {.file = "train.py", .line = 9});
  b.op("aten::item", 4000.0 + 10, 5, {.file = "train.py", .line = 9});   // the tail: outside any step
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].metric("count"), 4);
  EXPECT_EQ(f[0].metric("per_step"), 1);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_NE(f[0].message.find("(1/step)"), std::string::npos) << f[0].message;
}

TEST(Sync001, RareSyncIsAWarning) {
  TraceBuilder b;
  b.step(1, 0, 1000).step(2, 1000, 1000).step(3, 2000, 1000);
  b.op("aten::item", 100, 5);  // once in three steps, 0.17% of the time
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_NEAR(f[0].metric("per_step"), 1.0 / 3, 1e-9);
  // issue 30: never "0.333/step" nor "1 host-device syncs"
  EXPECT_NE(f[0].message.find("1 host-device sync (1 in 3 steps)"), std::string::npos) << f[0].message;
}

// Rates in words: a whole number per step, else the count and the steps; never "0/step" for
// syncs that happened, nor "0.667/step" (issue 30).
TEST(Sync001, RatesThatAreNoWholeNumberSayCountAndSteps) {
  TraceBuilder b;
  b.step(1, 0, 1000).step(2, 1000, 1000).step(3, 2000, 1000);
  b.op("aten::item", 100, 5, {.file = "train.py", .line = 4}).op("aten::item", 1100, 5, {.file = "train.py", .line = 4});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].message.find("2 host-device syncs (2 in 3 steps)"), std::string::npos) << f[0].message;

  TraceBuilder c;   // a capture whose syncs all ran in the start-up step 0
  c.capture();
  for (int s = 0; s < 3; ++s) c.step(s, s * 1000.0, 1000);
  c.op("aten::item", 10, 5, {.file = "train.py", .line = 4}).op("aten::item", 20, 5, {.file = "train.py", .line = 4});
  f = sync(c.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].metric("per_step"), 0);
  EXPECT_NE(f[0].message.find("2 host-device syncs (all in start-up step 0)"), std::string::npos) << f[0].message;
  EXPECT_EQ(f[0].message.find("/step"), std::string::npos) << f[0].message;
}

// A capture's message gives the NPU estimate and the time measured here, which is the time_ns
// metric printed beside it (issue 30: "about 150 us in all" beside time=762 us).
TEST(Sync001, CaptureMessageNamesTheMeasuredTimeOfItsMetric) {
  TraceBuilder b;
  b.capture();
  b.step(1, 0, 1000).step(2, 1000, 1000);
  b.op("aten::item", 100, 381, {.file = "train.py", .line = 4}).op("aten::item", 1100, 381, {.file = "train.py", .line = 4});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].metric("time_ns"), 762000);
  EXPECT_NE(f[0].message.find("762 us measured here"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("on an NPU"), std::string::npos) << f[0].message;
}

TEST(Sync001, ItemWithoutFrameIsGroupedByParentChain) {
  TraceBuilder b;
  b.op("log_metrics", 0, 100, {.kind = OpKind::Annotation});
  b.op("aten::item", 10, 20);
  b.op("aten::item", 50, 20);
  b.op("aten::item", 200, 20);  // top level: another group
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 2u);
  const Finding& in_log = f[0].metric("count") == 2 ? f[0] : f[1];
  EXPECT_EQ(in_log.metric("count"), 2);
  ASSERT_FALSE(in_log.notes.empty());
  EXPECT_EQ(in_log.notes[0], "called from: log_metrics");
}

TEST(Sync001, DistinctUserLinesAreDistinctFindings) {
  TraceBuilder b;
  b.op("aten::item", 10, 20, {.file = "train.py", .line = 95});
  b.op("aten::item", 50, 20, {.file = "train.py", .line = 96});
  b.op("aten::item", 90, 20, {.file = "train.py", .line = 95});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].metric("count") + f[1].metric("count"), 3);
}

TEST(Sync001, ExplicitRuntimeSyncOutsideOps) {
  TraceBuilder b;
  b.runtime("cudaDeviceSynchronize", RuntimeKind::Sync, 100, 2000);
  b.runtime("aclrtSynchronizeStream", RuntimeKind::Other, 3000, 50);  // kind unknown: the name says it
  b.runtime("cudaStreamWaitEvent", RuntimeKind::Other, 4000, 5);      // device-side wait: not a host sync
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].location.op, "cudaDeviceSynchronize");
  EXPECT_EQ(f[0].metric("time_ns"), 2000000);
  EXPECT_EQ(f[0].metric("per_step"), 1);  // no steps: the total
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[1].location.op, "aclrtSynchronizeStream");
  EXPECT_NE(f[0].fix.find("synchronize"), std::string::npos);
}

TEST(Sync001, SynchronousMemcpyIsASync) {
  TraceBuilder b;
  b.op("aten::copy_", 0, 100);
  b.runtime("cudaMemcpy", RuntimeKind::Memcpy, 10, 80, {.correlation = 5});
  b.runtime("cudaMemcpyAsync", RuntimeKind::Memcpy, 200, 5);
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "aten::copy_");
  EXPECT_NE(f[0].message.find("cudaMemcpy in aten::copy_"), std::string::npos) << f[0].message;
}

// .cpu(): aten::to > aten::copy_ with an async DtoH copy and a stream sync. One finding,
// located at the outermost aten op, not a second one for the copy kernel.
TEST(Sync001, DtoHCopyWithSyncIsReportedOnce) {
  TraceBuilder b;
  b.op("aten::to", 0, 300, {.file = "eval.py", .line = 12});
  b.op("aten::copy_", 10, 280, {.external_id = 7});
  b.runtime("cudaMemcpyAsync", RuntimeKind::Memcpy, 20, 10, {.correlation = 70, .external_id = 7});
  b.runtime("cudaStreamSynchronize", RuntimeKind::Sync, 40, 240, {.external_id = 7});
  b.kernel("Memcpy DtoH (Device -> Pageable)", 50, 30,
           {.kind = TaskKind::Memcpy, .copy = CopyDir::DtoH, .correlation = 70, .external_id = 7});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "aten::to");
  EXPECT_EQ(f[0].location.file, "eval.py");
  EXPECT_NE(f[0].message.find("cudaStreamSynchronize"), std::string::npos);
}

TEST(Sync001, UnlinkedDtoHCopyIsReported) {
  TraceBuilder b;
  b.kernel("MEMCPY_DtoH", 0, 40, {.kind = TaskKind::Memcpy, .copy = CopyDir::DtoH});
  b.kernel("MEMCPY_DtoH", 100, 60, {.kind = TaskKind::Memcpy, .copy = CopyDir::DtoH});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "Memcpy DtoH");
  EXPECT_EQ(f[0].metric("count"), 2);
  EXPECT_EQ(f[0].metric("time_ns"), 100000);
}

TEST(Sync001, BooleanIndexIsDataDependentIntegerIndexIsNot) {
  TraceBuilder b;
  b.op("aten::index", 0, 50, {.inputs = {{"float", {8, 4}, {}}, {"bool", {8}, {}}}});
  b.op("aten::index", 100, 50, {.inputs = {{"float", {8, 4}, {}}, {"long int", {3}, {}}}});
  b.op("aten::nonzero", 200, 50, {.file = "m.py", .line = 3});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 2u);
  for (const auto& x : f) EXPECT_NE(x.fix.find("torch.where"), std::string::npos);
}

// A capture's Python-level Tensor.item wraps the dispatcher's aten::item: counted once.
TEST(Sync001, PythonSyncFromCaptureCoversNestedAtenOps) {
  TraceBuilder b;
  test::read_as_capture(b.raw());
  b.step(1, 0, 100);
  b.op("Tensor.item", 10, 30, {.kind = OpKind::PythonSync, .file = "train.py", .line = 40});
  b.op("aten::item", 12, 25);
  b.op("aten::_local_scalar_dense", 13, 20);
  b.op("Tensor.cpu", 50, 20, {.kind = OpKind::PythonSync, .file = "train.py", .line = 41});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].location.op, "Tensor.item");
  EXPECT_EQ(f[0].location.line, 40);
  EXPECT_EQ(f[0].metric("count"), 1);
  EXPECT_EQ(f[0].severity, Severity::Error);  // once per step, 30% of the step
  EXPECT_EQ(f[1].location.op, "Tensor.cpu");
  EXPECT_NE(f[1].fix.find("non_blocking"), std::string::npos);
}

// LBFGS's step line reads a bool, a float and a scalar alpha on the host: one line, one cause.
TEST(Sync001, SyncsOfDifferentKindsAtOneLineAreOneFinding) {
  TraceBuilder b;
  test::read_as_capture(b.raw());
  b.step(1, 0, 1000);
  b.op("Tensor.__bool__", 10, 5, {.kind = OpKind::PythonSync, .file = "train.py", .line = 58});
  b.op("Tensor.__float__", 20, 5, {.kind = OpKind::PythonSync, .file = "train.py", .line = 58});
  b.op("aten::_local_scalar_dense", 30, 5, {.file = "train.py", .line = 58});
  b.op("Tensor.item", 40, 5, {.kind = OpKind::PythonSync, .file = "train.py", .line = 63});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 2u);
  const Finding& step_line = f[0].location.line == 58 ? f[0] : f[1];
  EXPECT_EQ(step_line.metric("count"), 3);
  EXPECT_NE(step_line.message.find("Tensor.__bool__, Tensor.__float__, aten::_local_scalar_dense"), std::string::npos)
      << step_line.message;
}

// A CPU capture judges where each tensor will live after the move (analysis/placement.hpp):
// reads of host bookkeeping (batch indices from torch.randint) are not syncs; reads of what a
// parameter computed, or of what `.to(device)` placed, are.
// A capture made on `device`, one step.
TraceBuilder capture_on(std::string_view device) {
  TraceBuilder b;
  test::read_as_capture(b.raw());
  b.raw().set_env("device", device);
  b.step(1, 0, 1000);
  return b;
}

TEST(Sync001, CpuCaptureReportsOnlyReadsOfFutureDeviceData) {
  TraceBuilder b = capture_on("cpu");
  using S = test::TensorSpec;
  auto host = [](int64_t storage) { return S{.dtype = "int64", .shape = {4}, .storage = storage, .device = "cpu"}; };
  auto at = [](int line) { return test::OpOpts{.kind = OpKind::PythonSync, .file = "train.py", .line = line}; };
  b.op("aten::randint", 10, 5, {.file = "train.py", .line = 10, .outputs = {host(1)}});
  auto read_ix = at(11);
  read_ix.inputs = {host(1)};
  b.op("Tensor.__int__", 20, 5, read_ix);
  b.op("aten::_local_scalar_dense", 21, 2, {.inputs = {host(1)}});   // inside the read: not counted either
  b.op("aten::mm", 30, 5, {.file = "train.py", .line = 12,
                           .inputs = {host(2), S{.shape = {4, 4}, .storage = 3, .requires_grad = true, .device = "cpu"}},
                           .outputs = {host(4)}});
  auto read_loss = at(13);
  read_loss.inputs = {host(4)};
  b.op("Tensor.item", 40, 5, read_loss);
  b.op("aten::stack", 50, 5, {.file = "train.py", .line = 14, .inputs = {host(1)}, .outputs = {host(5)}});
  b.op("Tensor.to(device)", 60, 1, {.kind = OpKind::Placement, .file = "train.py", .line = 15, .inputs = {host(5)}});
  b.op("aten::nonzero", 70, 5, {.file = "train.py", .line = 16, .inputs = {host(5)}});
  // the same upload asynchronously: not a wait
  b.op("Tensor.to(device)", 80, 1, {.kind = OpKind::Placement, .file = "train.py", .line = 17, .inputs = {host(6)},
                                    .detail = "non_blocking=True"});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 3u);
  std::vector<int> lines{f[0].location.line, f[1].location.line, f[2].location.line};
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<int>{13, 15, 16}));   // 15: the blocking upload
  for (const Finding& x : f)
    if (x.location.line == 15) {
      EXPECT_NE(x.message.find("blocking host-to-device cop"), std::string::npos) << x.message;
      EXPECT_NE(x.fix.find("pin_memory=True"), std::string::npos);
      EXPECT_NE(x.fix.find("non_blocking=True"), std::string::npos);
    }
}

// A copy is a per-step upload only when it happens in the steps: a line whose copies all fall in
// the start-up step 0 (batchify's `data.to(device)`, `Generator(...).to(device)` before the
// loop, recorded with `--steps all`) copies once; pinned memory would change nothing (issue 45).
TEST(Sync001, OneOffPlacementsBeforeTheLoopAreNoUploads) {
  TraceBuilder b;
  test::read_as_capture(b.raw());
  b.raw().set_env("device", "cpu");
  b.step(0, 0, 1000).step(1, 1000, 1000).step(2, 2000, 1000);
  using S = test::TensorSpec;
  auto host = [](int64_t storage) { return S{.dtype = "int64", .shape = {64}, .storage = storage, .device = "cpu"}; };
  auto place = [&](double at, int line, int64_t storage) {
    b.op("Tensor.to(device)", at, 1, {.kind = OpKind::Placement, .file = "train.py", .line = line, .inputs = {host(storage)}});
  };
  place(100, 5, 1);       // start-up: the whole data set, once
  place(200, 6, 2);
  place(1100, 20, 3);     // each step's batch
  place(2100, 20, 4);
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.line, 20);
  EXPECT_NE(f[0].message.find("2 blocking host-to-device copies"), std::string::npos) << f[0].message;
}

// `losses[k] = loss.item()` writes into a host tensor: a copy_ never moves its destination, so
// what the host tensor computes later (losses.mean() formatted into a log line) is host data.
TEST(Sync001, ACopyIntoAHostTensorLeavesItOnTheHost) {
  TraceBuilder b = capture_on("cpu");
  using S = test::TensorSpec;
  auto cpu = [](int64_t storage, std::vector<int64_t> shape) {
    return S{.shape = std::move(shape), .storage = storage, .device = "cpu"};
  };
  b.op("aten::zeros", 10, 1, {.file = "train.py", .line = 5, .outputs = {cpu(1, {4})}});
  b.op("aten::mm", 20, 5, {.file = "train.py", .line = 6,
                           .inputs = {cpu(2, {4, 4}), S{.shape = {4, 4}, .storage = 3, .requires_grad = true, .device = "cpu"}},
                           .outputs = {cpu(4, {})}});
  b.op("aten::copy_", 30, 1, {.file = "train.py", .line = 7, .inputs = {cpu(1, {}), cpu(4, {})}, .outputs = {cpu(1, {})}});
  b.op("aten::mean", 40, 1, {.file = "train.py", .line = 8, .inputs = {cpu(1, {4})}, .outputs = {cpu(5, {})}});
  b.op("Tensor.__format__", 50, 1, {.kind = OpKind::PythonSync, .file = "train.py", .line = 9, .inputs = {cpu(5, {})}});
  b.op("Tensor.item", 60, 1, {.kind = OpKind::PythonSync, .file = "train.py", .line = 10, .inputs = {cpu(4, {})}});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.line, 10);   // the device scalar's read; the host tensor's format is none
}

// On the CPU `.cpu()` returns the tensor itself; on a device its result is a host copy: reads
// of it after the copy (pairs[0].tolist() after pairs = x.cpu()) are host reads, until device
// work uses the tensor again.
TEST(Sync001, ReadsOfAHostCopyAreNotSyncs) {
  TraceBuilder b = capture_on("cpu");
  using S = test::TensorSpec;
  auto host = [](int64_t storage) { return S{.dtype = "int64", .shape = {2, 4}, .storage = storage, .device = "cpu"}; };
  auto at = [](const char* name, int line, S in) {
    (void)name;
    return test::OpOpts{.kind = OpKind::PythonSync, .file = "eval.py", .line = line, .inputs = {in}};
  };
  b.op("aten::mm", 10, 5, {.file = "eval.py", .line = 9,
                           .inputs = {host(1), S{.shape = {4, 4}, .storage = 2, .requires_grad = true, .device = "cpu"}},
                           .outputs = {host(3)}});
  b.op("Tensor.cpu", 20, 5, at("cpu", 10, host(3)));                                   // the copy: a sync
  b.op("aten::select", 30, 1, {.file = "eval.py", .line = 11, .inputs = {host(3)}, .outputs = {host(3)}});
  b.op("Tensor.tolist", 40, 5, at("tolist", 11, host(3)));                             // reads the copy
  b.op("aten::add", 50, 5, {.file = "eval.py", .line = 12,
                            .inputs = {host(3), S{.shape = {4, 4}, .storage = 2, .requires_grad = true, .device = "cpu"}},
                            .outputs = {host(4)}});                                    // device work on it again
  b.op("Tensor.item", 60, 5, at("item", 13, host(3)));                                 // a device read again
  auto f = sync(b.build());
  std::vector<int> lines;
  for (const Finding& x : f) lines.push_back(x.location.line);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<int>{10, 13}));
}

// On a device the copy op itself says it: cpu in, device out, without non_blocking=True.
TEST(Sync001, DeviceCaptureBlockingUploadIsTheCopy) {
  TraceBuilder b = capture_on("cuda");
  using S = test::TensorSpec;
  b.op("aten::_to_copy", 10, 5, {.file = "train.py", .line = 30,
                                 .inputs = {S{.dtype = "int64", .shape = {16, 256}, .device = "cpu"}},
                                 .outputs = {S{.dtype = "int64", .shape = {16, 256}, .device = "cuda:0"}},
                                 .detail = "non_blocking=False"});
  b.op("aten::_to_copy", 20, 5, {.file = "train.py", .line = 31,
                                 .inputs = {S{.dtype = "int64", .shape = {16, 256}, .device = "cpu"}},
                                 .outputs = {S{.dtype = "int64", .shape = {16, 256}, .device = "cuda:0"}},
                                 .detail = "non_blocking=True"});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.line, 30);
}

// A GPU profile: the stream synchronize inside `aten::to` whose copy is host-to-device.
TEST(Sync001, ProfileSynchronizeInsideAnUploadIsTheUpload) {
  TraceBuilder b;
  b.step(1, 0, 1000);
  b.op("aten::to", 100, 50, {.external_id = 7}).op("aten::copy_", 105, 40, {.external_id = 8});
  b.runtime("cudaMemcpyAsync", RuntimeKind::Memcpy, 110, 5, {.correlation = 1, .external_id = 8});
  b.runtime("cudaStreamSynchronize", RuntimeKind::Sync, 116, 20, {.external_id = 8});
  b.kernel("Memcpy HtoD (Pageable -> Device)", 111, 10, {.kind = TaskKind::Memcpy, .copy = CopyDir::HtoD,
                                                         .correlation = 1});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].fix.find("non_blocking=True"), std::string::npos) << f[0].fix;
}

// Only copy ops upload: an HtoD memcpy and a synchronize inside a conv2d (cudnn's own work, the
// alexnet-sync fixture) are a sync, not the program's data waiting to go over.
TEST(Sync001, ProfileCopyInsideAComputeOpIsNoUpload) {
  TraceBuilder b;
  b.step(1, 0, 1000);
  b.op("aten::conv2d", 100, 50, {.external_id = 7});
  b.runtime("cudaMemcpyAsync", RuntimeKind::Memcpy, 110, 5, {.correlation = 1, .external_id = 7});
  b.runtime("cudaStreamSynchronize", RuntimeKind::Sync, 116, 20, {.external_id = 7});
  b.kernel("Memcpy HtoD (Pageable -> Device)", 111, 10, {.kind = TaskKind::Memcpy, .copy = CopyDir::HtoD,
                                                         .correlation = 1});
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].fix.find("non_blocking=True"), std::string::npos) << f[0].fix;
}

// A capture run on a device says where each tensor is: a CPU tensor's read is no sync.
TEST(Sync001, DeviceCaptureUsesEachTensorsOwnDevice) {
  TraceBuilder b = capture_on("npu");
  using S = test::TensorSpec;
  test::OpOpts cpu_read{.kind = OpKind::PythonSync, .file = "train.py", .line = 20,
                  .inputs = {S{.dtype = "int64", .shape = {}, .storage = 1, .device = "cpu"}}};
  test::OpOpts npu_read{.kind = OpKind::PythonSync, .file = "train.py", .line = 21,
                  .inputs = {S{.shape = {}, .storage = 2, .device = "npu:0"}}};
  b.op("Tensor.item", 10, 5, cpu_read);
  b.op("Tensor.item", 20, 5, npu_read);
  auto f = sync(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.line, 21);
}

}  // namespace
}  // namespace npud
