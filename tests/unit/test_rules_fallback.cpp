// FALLBACK001 ai-cpu-task and FALLBACK002 cpu-fallback-op on hand-written traces.
#include <gtest/gtest.h>

#include "knowledge/knowledge.hpp"
#include "rules/builtin_rules.hpp"
#include "trace_builder.hpp"

namespace npud {
namespace {

using test::TraceBuilder;

bool contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }
bool contains(const std::vector<std::string>& lines, std::string_view what) {
  for (const auto& l : lines)
    if (contains(l, what)) return true;
  return false;
}

// --- FALLBACK001 ---

TEST(Fallback001, NoAiCpuTaskNoFinding) {
  TraceBuilder b;
  b.kernel("MatMulV2", 0, 100, {.task_type = "AI_CORE"}).kernel("Add12", 200, 10, {.task_type = "AI_VECTOR_CORE"});
  EXPECT_TRUE(test::run_rule(fallback001_rule(), b.build()).empty());
}

// Like the fixtures' trans_Cast_* INT32 AI_CPU tasks: instances are grouped by name.
TEST(Fallback001, AiCpuTasksAreGroupedByName) {
  TraceBuilder b;
  test::read_as_ascend_csv(b.raw());
  b.step(1, 0, 2000);
  b.kernel("MatMulV2", 0, 600, {.task_type = "AI_CORE"});
  b.kernel("trans_Cast_5", 700, 200, {.kind = TaskKind::AiCpu, .task_type = "AI_CPU"});
  b.kernel("trans_Cast_18", 1000, 100, {.kind = TaskKind::AiCpu, .task_type = "AI_CPU"});
  b.kernel("trans_Cast_5", 1200, 100, {.kind = TaskKind::AiCpu, .task_type = "AI_CPU"});
  auto f = test::run_rule(fallback001_rule(), b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].location.op, "trans_Cast");
  EXPECT_EQ(f[0].metric("count"), 3);
  EXPECT_EQ(f[0].metric("time_ns"), 400000);
  EXPECT_DOUBLE_EQ(f[0].metric("device_share"), 0.4);  // 400 of 1000 us busy
  EXPECT_EQ(f[0].metric("per_step"), 3);
  EXPECT_TRUE(contains(f[0].message, "3 AI-CPU tasks")) << f[0].message;
  EXPECT_TRUE(contains(f[0].fix, "int32")) << f[0].fix;
  ASSERT_FALSE(f[0].notes.empty());
  EXPECT_TRUE(contains(f[0].notes[0], "trans_Cast_5, trans_Cast_18"));
}

TEST(Fallback001, KnownSilentAiCpuOpGetsTheFact) {
  TraceBuilder b;
  b.kernel("aclnnIsIn_IsIn", 0, 100, {.kind = TaskKind::AiCpu});
  b.kernel("IsInf3", 200, 100, {.kind = TaskKind::AiCpu});
  auto f = test::run_rule(fallback001_rule(), b.build());
  ASSERT_EQ(f.size(), 2u);
  for (const Finding& x : f) {
    bool has_fact = false;
    for (const auto& n : x.notes) has_fact = has_fact || contains(n, "NPU-FACTS");
    EXPECT_EQ(has_fact, x.location.op == "aclnnIsIn_IsIn") << x.location.op;
  }
}

TEST(Fallback001, LinksToTheLaunchingHostOp) {
  TraceBuilder b;
  b.op("aten::unique", 0, 100, {.external_id = 3, .file = "data.py", .line = 7});
  b.kernel("UniqueWithCounts", 10, 500, {.kind = TaskKind::AiCpu, .external_id = 3});
  auto f = test::run_rule(fallback001_rule(), b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.file, "data.py");
  EXPECT_EQ(f[0].location.op, "UniqueWithCounts");
  ASSERT_FALSE(f[0].notes.empty());
  EXPECT_EQ(f[0].notes[0], "launched by aten::unique");
}

// --- FALLBACK002 ---

TEST(Fallback002, OpWithoutKernelIsFlagged) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {"add.Tensor", "mm"});
  TraceBuilder b;
  b.step(1, 0, 1000).step(2, 1000, 1000);
  for (int s = 0; s < 2; ++s) {
    b.op("aten::add", s * 1000 + 10, 20);
    b.op("aten::mm", s * 1000 + 50, 20);
    b.op("aten::histc", s * 1000 + 100, 40, {.file = "model.py", .line = 31});
  }
  auto f = test::run_rule(fallback002_rule(), b.build(), v);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].location.op, "aten::histc");
  EXPECT_EQ(f[0].location.file, "model.py");
  EXPECT_EQ(f[0].metric("count"), 2);
  EXPECT_EQ(f[0].metric("per_step"), 1);
  EXPECT_EQ(f[0].metric("self_ns"), 80000);
  EXPECT_TRUE(contains(f[0].message, "no NPU kernel in torch_npu 2.1.0")) << f[0].message;
  bool list = false, caveat = false, warning = false;
  for (const auto& n : f[0].notes) {
    list = list || contains(n, "op list: torch_npu 2.1.0 (development tip");
    caveat = caveat || contains(n, "pass --torch-npu with the wheel you deploy");
    warning = warning || contains(n, "The operator 'aten::histc' is not currently supported on the NPU backend");
  }
  EXPECT_TRUE(list && caveat && warning);
  EXPECT_FALSE(contains(f[0].fix, "NpuLayerNorm"));
}

TEST(Fallback002, OpWithKernelOrNpuOrNonAtenIsNotFlagged) {
  OpList list = test::tiny_list({"add.Tensor", "histc"});
  list.add_custom("npu_rms_norm");
  KnowledgeVersion v = test::tiny_version("2.1.0", std::move(list));
  TraceBuilder b;
  b.op("aten::add.Tensor", 0, 10).op("aten::histc", 20, 10);
  b.op("aten::npu_rms_norm", 40, 10).op("npu::npu_fusion_attention", 60, 10);
  b.op("aten::detach", 80, 5).op("aten::view", 90, 5);        // generic view ops
  b.op("my_function", 100, 5, {.kind = OpKind::Python});
  EXPECT_TRUE(test::run_rule(fallback002_rule(), b.build(), v).empty());
}

TEST(Fallback002, CompositeOpIsNotFlagged) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {"bmm"});
  TraceBuilder b;
  b.op("aten::einsum", 0, 100).op("aten::bmm", 10, 50);
  EXPECT_TRUE(test::run_rule(fallback002_rule(), b.build(), v).empty());
}

// On NPU an op with its own kernel never runs what it called on CUDA (cudnn_* etc.).
TEST(Fallback002, WhatAnOpWithAnNpuKernelCalledIsNotFlagged) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {"convolution"});
  TraceBuilder b;
  b.op("aten::convolution", 0, 100).op("aten::_convolution", 5, 90).op("aten::histc", 10, 50);
  b.op("aten::cudnn_convolution", 200, 10);  // other backend's implementation op
  EXPECT_TRUE(test::run_rule(fallback002_rule(), b.build(), v).empty());
}

TEST(Fallback002, ExplicitCompositeIsNotFlagged) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {});
  TraceBuilder b;
  b.op("aten::zeros_like", 0, 10);
  EXPECT_TRUE(test::run_rule(fallback002_rule(), b.build(), v).empty());
}

TEST(Fallback002, ChildrenOfAFlaggedOpAreNotFlaggedAgain) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {});
  TraceBuilder b;
  b.op("aten::histc", 0, 100).op("aten::zeros_fancy", 10, 50);
  auto f = test::run_rule(fallback002_rule(), b.build(), v);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "aten::histc");
}

TEST(Fallback002, LegacyLinesUseTocpuAndUnsupportedLists) {
  OpList list = test::tiny_list({"add.Tensor", "_cholesky_helper", "bitwise_left_shift.Tensor"});
  list.tocpu.insert("_cholesky_helper");
  list.unsupported.insert("bitwise_left_shift.Tensor");
  KnowledgeVersion v = test::tiny_version("2.0.1", std::move(list));
  TraceBuilder b;
  b.op("aten::_cholesky_helper", 0, 10).op("aten::bitwise_left_shift", 20, 10).op("aten::add", 40, 10);
  b.op("aten::histc", 60, 10);
  auto f = test::run_rule(fallback002_rule(), b.build(), v);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].location.op, "aten::bitwise_left_shift");
  EXPECT_TRUE(contains(f[0].message, "unsupported"));
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(f[i].severity, Severity::Warning);
    if (f[i].location.op == "aten::_cholesky_helper") EXPECT_TRUE(contains(f[i].message, "runs on the CPU"));
    else EXPECT_TRUE(contains(f[i].message, "no automatic CPU fallback")) << f[i].message;
  }
}

TEST(Fallback002, SilentHostWorkIsInfoWithTheFact) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {"isin.Tensor_Tensor", "argsort", "gcd"});
  TraceBuilder b;
  b.op("aten::isin", 0, 10);
  b.op("aten::argsort", 20, 10, {.inputs = {{"long int", {16}, {1}}}});
  b.op("aten::argsort", 40, 10, {.inputs = {{"float", {16}, {1}}}});  // float keys: fine
  auto f = test::run_rule(fallback002_rule(), b.build(), v);
  ASSERT_EQ(f.size(), 2u);
  for (const Finding& x : f) {
    EXPECT_EQ(x.severity, Severity::Info);
    ASSERT_FALSE(x.notes.empty());
    EXPECT_TRUE(contains(x.notes[0], "NPU-FACTS")) << x.notes[0];
  }
}

// Captures keep overloads: a bare "aten::mode" is the default overload, which a list with
// only mode.dimname does not cover; a Kineto trace drops overloads, so there it is a guess.
TEST(Fallback002, BareNameInACaptureIsTheDefaultOverload) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {"mode.dimname", "mode.values"});
  TraceBuilder capture;
  capture.capture().op("aten::mode", 0, 10, {.file = "train.py", .line = 7});
  auto f = test::run_rule(fallback002_rule(), capture.build(), v);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "aten::mode");
  TraceBuilder kineto;
  kineto.op("aten::mode", 0, 10);
  EXPECT_TRUE(test::run_rule(fallback002_rule(), kineto.build(), v).empty());
}

// A CompositeExplicitAutograd op's kernel ops are recorded inside it (logcumsumexp ->
// _logcumsumexp): the op is covered by its generic kernel, what it calls is judged.
TEST(Fallback002, KernelOpsInsideAnExplicitCompositeAreJudged) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {"add.Tensor"});
  TraceBuilder b;
  b.capture().op("aten::logcumsumexp", 0, 100, {.file = "m.py", .line = 3}).op("aten::_logcumsumexp", 10, 50);
  auto f = test::run_rule(fallback002_rule(), b.build(), v);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "aten::_logcumsumexp");
  EXPECT_EQ(f[0].location.file, "m.py");  // the user line of the enclosing call
}

// torch >= 2.4 runs a foreach overload the NPU lacks with its generic kernel, one NPU op per
// tensor: an info note, not a CPU fallback. torch 2.1-2.3 has no generic kernel for it.
TEST(Fallback002, ForeachOverloadByTheTorchThatRan) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {"mul_.Tensor"});
  TraceBuilder now;
  now.capture("2.13.0+cpu").op("aten::_foreach_mul_.Tensor", 0, 100, {.file = "train.py", .line = 9});
  now.op("aten::mul_.Tensor", 10, 10);
  // torch 2.13's composite kernel runs it as one NPU mul_ per tensor: nothing falls back and no
  // setting removes it, so no finding (issue 45).
  auto f = test::run_rule(fallback002_rule(), now.build(), v);
  EXPECT_TRUE(f.empty()) << f[0].message;
  // The facts the shim recorded win over the table (here: a torch whose foreach op is backend-only).
  TraceBuilder recorded;
  recorded.capture("2.13.0+cpu").dispatch("aten::_foreach_mul_.Tensor", 'B', true);
  recorded.op("aten::_foreach_mul_.Tensor", 0, 100, {.file = "train.py", .line = 9});
  auto g = test::run_rule(fallback002_rule(), recorded.build(), v);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].severity, Severity::Warning);
  // A torch 2.1 trace: backend-only there, a CPU fallback.
  TraceBuilder old;
  old.capture("2.1.2").op("aten::_foreach_mul_.Tensor", 0, 100, {.file = "train.py", .line = 9});
  auto h = test::run_rule(fallback002_rule(), old.build(), v);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].severity, Severity::Warning);
}

// special_entr is a wrapper of the structured special_entr.out, which no torch_npu lists: on
// torch_npu 2.1.0.post8 it falls back (a user's report); the out overload is named.
TEST(Fallback002, StructuredWrapperNeedsItsOutKernel) {
  const KnowledgeVersion* v = Knowledge::builtin().find("2.1.0.post8");
  ASSERT_NE(v, nullptr);
  TraceBuilder b;
  b.capture("2.1.0").op("aten::special_entr", 0, 50, {.file = "loss.py", .line = 4});
  auto f = test::run_rule(fallback002_rule(), b.build(), *v);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_TRUE(contains(f[0].notes, "special_entr.out")) << f[0].notes[0];
  TraceBuilder kineto;   // a trace without overloads or torch version: the wheel's torch line
  kineto.op("aten::special_entr", 0, 50);
  EXPECT_EQ(test::run_rule(fallback002_rule(), kineto.build(), *v).size(), 1u);
}

TEST(Fallback002, ScatterReduceJudgedByItsRecordedArguments) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {"scatter_reduce.two", "scatter_reduce.two_out"});
  const std::vector<test::TensorSpec> f32 = {{"float32", {8}, {1}}, {"int64", {8}, {1}}, {"float32", {8}, {1}}};
  TraceBuilder sum;
  sum.capture().op("aten::scatter_reduce.two", 0, 10, {.inputs = f32, .detail = "reduce=sum"});
  EXPECT_TRUE(test::run_rule(fallback002_rule(), sum.build(), v).empty());
  TraceBuilder amax;
  amax.capture().op("aten::scatter_reduce.two", 0, 10, {.inputs = f32, .detail = "reduce=amax"});
  auto f = test::run_rule(fallback002_rule(), amax.build(), v);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Info);
  EXPECT_TRUE(contains(f[0].fix, "reduce=\"sum\"")) << f[0].fix;
  TraceBuilder no_self;
  no_self.capture().op("aten::scatter_reduce.two", 0, 10, {.inputs = f32, .detail = "reduce=sum include_self=False"});
  EXPECT_EQ(test::run_rule(fallback002_rule(), no_self.build(), v).size(), 1u);
  TraceBuilder kineto;  // arguments unknown: the fact is stated
  kineto.op("aten::scatter_reduce", 0, 10, {.inputs = f32});
  EXPECT_EQ(test::run_rule(fallback002_rule(), kineto.build(), v).size(), 1u);
}

TEST(Fallback002, Float64ComputeIsAiCpuWork) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {"mm", "_to_copy", "add.Tensor"});
  TraceBuilder b;
  b.capture();
  b.op("aten::mm", 0, 10, {.file = "fit.py", .line = 12, .inputs = {{"float64", {4, 4}, {4, 1}}, {"float64", {4, 4}, {4, 1}}}});
  b.op("aten::_to_copy", 20, 10, {.inputs = {{"float64", {4, 4}, {4, 1}}}});   // the cast itself: fine
  b.op("aten::add.Tensor", 40, 10, {.inputs = {{"float64", {}, {}}, {"float32", {4}, {1}}}});  // a 0-d scalar
  b.op("aten::mm", 60, 10, {.inputs = {{"float32", {4, 4}, {4, 1}}, {"float32", {4, 4}, {4, 1}}}});
  auto f = test::run_rule(fallback002_rule(), b.build(), v);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "aten::mm");
  EXPECT_EQ(f[0].location.line, 12);
  EXPECT_EQ(f[0].metric("count"), 1);
  EXPECT_TRUE(contains(f[0].notes[0], "float64 has no AI-core kernels")) << f[0].notes[0];
  EXPECT_TRUE(contains(f[0].fix, ".float()")) << f[0].fix;
}

// `preds.eq(labels).double()` then `.sum()` a line later: the cast is the line to change.
TEST(Fallback002, Float64MadeByACastPointsAtTheCast) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {"sum", "_to_copy"});
  TraceBuilder b;
  b.capture();
  b.op("aten::_to_copy", 0, 10, {.file = "train.py", .line = 55, .inputs = {{"bool", {30}, {1}}},
                                 .outputs = {{"float64", {30}, {1}}}});
  b.raw().tensors.back().id = 7;
  b.op("aten::sum", 20, 10, {.file = "train.py", .line = 56, .inputs = {{"float64", {30}, {1}}}});
  b.raw().tensors.back().id = 7;
  auto f = test::run_rule(fallback002_rule(), b.build(), v);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.line, 55);
}

// Sparse COO inputs need a sparse NPU kernel (op-plugin's sparse_op_api entries); the CPU
// fallback is for dense tensors, so the call raises on an NPU.
TEST(Fallback002, SparseInputWithoutSparseKernelIsAnError) {
  OpList list = test::tiny_list({"mm", "add.out"});
  list.impl["add.out"] = "op-plugin:official[acl_op+op_api+sparse_op_api]";
  KnowledgeVersion v = test::tiny_version("2.1.0", std::move(list));
  TraceBuilder b;
  b.capture();
  auto sparse = [&](uint32_t op_inputs) {   // marks the op's last `op_inputs` inputs sparse
    for (uint32_t k = 0; k < op_inputs; ++k) b.raw().tensors[b.raw().tensors.size() - 1 - k].layout = b.raw().intern("sparse_coo");
  };
  b.op("aten::mm", 0, 10, {.file = "gcn.py", .line = 23, .inputs = {{"float32", {60, 16}, {16, 1}}, {"float32", {60, 60}}}});
  sparse(1);
  b.op("aten::add.out", 20, 10, {.file = "gcn.py", .line = 30, .inputs = {{"float32", {60, 60}}}});
  sparse(1);
  b.op("aten::mm", 40, 10, {.file = "gcn.py", .line = 40, .inputs = {{"float32", {60, 16}, {16, 1}}, {"float32", {16, 3}, {3, 1}}}});
  auto f = test::run_rule(fallback002_rule(), b.build(), v);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].location.line, 23);
  EXPECT_EQ(f[0].metric("count"), 1);
  EXPECT_TRUE(contains(f[0].message, "sparse tensors reach aten::mm")) << f[0].message;
  EXPECT_TRUE(contains(f[0].fix, "add.out")) << f[0].fix;
}

TEST(Fallback002, IntSortAndIsneginfSayWhatToWriteInstead) {
  KnowledgeVersion v = test::tiny_version("2.1.0", {"sort.stable", "isneginf.out"});
  TraceBuilder b;
  b.capture();
  b.op("aten::sort.stable", 0, 10, {.inputs = {{"int64", {16}, {1}}}});
  b.op("aten::isneginf", 20, 10, {.inputs = {{"float32", {16}, {1}}}});
  auto f = test::run_rule(fallback002_rule(), b.build(), v);
  ASSERT_EQ(f.size(), 2u);
  bool sort = false, neginf = false;
  for (const Finding& x : f) {
    sort = sort || contains(x.fix, "x.float().sort()");
    neginf = neginf || contains(x.fix, "x == float(\"-inf\")");
  }
  EXPECT_TRUE(sort && neginf);
}

}  // namespace
}  // namespace npud
