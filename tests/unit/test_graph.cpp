// The dataflow graph and the pattern matcher on hand-built capture-like traces: edges by
// tensor id (and by storage when ids are missing), phases, commuted operands, optional casts,
// equivalent forms and near-misses.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "graph/affinity.hpp"
#include "graph/dataflow.hpp"
#include "graph/optimizer_loop.hpp"
#include "graph/patterns.hpp"
#include "read_as.hpp"

namespace npud::graph {
namespace {

struct T {
  int64_t id;
  std::initializer_list<int64_t> shape = {4, 8};
  int64_t storage = kUnset;
};

// Ops with tensor ids, one thread, one step, one module; times increase by 1 us per op.
class Capture {
 public:
  Capture() {
    test::read_as_capture(t);
    t.steps.push_back(Step{1, 0, 1'000'000'000});
  }
  Capture& op(std::string_view name, std::initializer_list<T> in, std::initializer_list<T> out, int line = 10,
              std::string_view module = "model.norm") {
    Op o;
    o.name = t.intern(name);
    o.kind = OpKind::Aten;
    o.start_ns = int64_t(t.ops.size() + 1) * 1000;
    o.dur_ns = 500;
    o.module = t.intern(module);
    uint32_t f = t.add_frame("train.py", line, "forward");
    o.stack = t.add_stack(std::span<const uint32_t>(&f, 1));
    o.inputs_begin = uint32_t(t.tensor_refs.size());
    for (const T& x : in) t.tensor_refs.push_back(tensor(x));
    o.inputs_count = uint32_t(in.size());
    o.outputs_begin = uint32_t(t.tensor_refs.size());
    for (const T& x : out) t.tensor_refs.push_back(tensor(x));
    o.outputs_count = uint32_t(out.size());
    t.ops.push_back(o);
    return *this;
  }
  Trace& done() {
    t.finalize();
    return t;
  }
  Trace t;

 private:
  uint32_t tensor(const T& x) {
    TensorMeta m;
    m.id = x.id;
    m.storage = x.storage == kUnset ? x.id : x.storage;
    m.dtype = t.intern("float32");
    m.scalar_type = DType::F32;
    m.dims_begin = uint32_t(t.dims.size());
    for (int64_t d : x.shape) t.dims.push_back(d);
    m.rank = uint8_t(x.shape.size());
    m.has_shape = true;
    return t.add_tensor(m);
  }
};

std::vector<PatternMatch> matches(const Trace& t, const PatternSpec& spec) {
  DataflowGraph g(t);
  return find_matches(g, spec);
}

TEST(DataflowGraph, LinksByIdThroughInPlaceOpsAndListsUsers) {
  Capture c;
  c.op("aten::mul.Tensor", {{1}, {2}}, {{3}})
      .op("aten::add_.Tensor", {{3}, {1}}, {{3}})    // in place: becomes the producer of 3
      .op("aten::relu", {{3}}, {{4}});
  DataflowGraph g(c.done());
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g.inputs(1)[0].node, 0u);
  EXPECT_EQ(g.inputs(1)[1].node, kNone);   // tensor 1 is a leaf
  EXPECT_EQ(g.inputs(2)[0].node, 1u);
  ASSERT_EQ(g.users(0).size(), 1u);
  EXPECT_EQ(g.users(0)[0], 1u);
}

TEST(DataflowGraph, FallsBackToStorageWhenIdsAreMissing) {
  Capture c;
  c.op("aten::exp", {{kUnset, {4, 8}, 7}}, {{kUnset, {4, 8}, 9}}).op("aten::log", {{kUnset, {4, 8}, 9}}, {{kUnset, {4, 8}, 11}});
  DataflowGraph g(c.done());
  EXPECT_EQ(g.inputs(1)[0].node, 0u);
}

TEST(DataflowGraph, OpsAtTheBackwardLineAreBackward) {
  Capture c;
  c.op("aten::mul.Tensor", {{1}, {2}}, {{3}})
      .op("aten::ones_like", {{5, {}}}, {{6, {}}}, 20, "")
      .op("aten::mul.Tensor", {{6, {}}, {2}}, {{7}}, 20, "")
      .op("aten::add_.Tensor", {{2}, {7}}, {{2}}, 21, "");
  DataflowGraph g(c.done());
  EXPECT_EQ(g.node(0).phase, Phase::Forward);
  EXPECT_EQ(g.node(1).phase, Phase::Backward);
  EXPECT_EQ(g.node(2).phase, Phase::Backward);
  EXPECT_EQ(g.node(3).phase, Phase::AfterBackward);
}

// x * rsqrt(mean(x^2) + eps) with the operands of the final mul commuted and a cast between.
TEST(Matcher, RmsNormWithCommutedOperandsAndCasts) {
  Capture c;
  c.op("aten::_to_copy", {{1}}, {{2}})
      .op("aten::pow.Tensor_Scalar", {{2}}, {{3}})
      .op("aten::mean.dim", {{3}}, {{4, {4, 1}}})
      .op("aten::add.Tensor", {{4, {4, 1}}}, {{5, {4, 1}}})
      .op("aten::rsqrt", {{5, {4, 1}}}, {{6, {4, 1}}})
      .op("aten::mul.Tensor", {{6, {4, 1}}, {1}}, {{7}})          // rsqrt first, x second
      .op("aten::_to_copy", {{7}}, {{8}})
      .op("aten::mul.Tensor", {{9, {8}}, {8}}, {{10}});          // weight * y (1-D weight, tail)
  auto m = matches(c.done(), rms_norm_pattern());
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].root, 5u);
  EXPECT_EQ(m[0].last, 7u);     // the weight multiply is part of it
  EXPECT_EQ(m[0].anchor, 4u);   // rsqrt
  EXPECT_EQ(m[0].ops, 7);       // the cast inside the match counts; the input cast of x does not
}

TEST(Matcher, RmsNormWithMulSquareSumAndReciprocalSqrt) {
  Capture c;
  c.op("aten::mul.Tensor", {{1}, {1}}, {{2}})
      .op("aten::sum.dim_IntList", {{2}}, {{3, {4, 1}}})
      .op("aten::div.Tensor", {{3, {4, 1}}}, {{4, {4, 1}}})
      .op("aten::sqrt", {{4, {4, 1}}}, {{5, {4, 1}}})
      .op("aten::reciprocal", {{5, {4, 1}}}, {{6, {4, 1}}})
      .op("aten::mul.Tensor", {{1}, {6, {4, 1}}}, {{7}});
  EXPECT_EQ(matches(c.done(), rms_norm_pattern()).size(), 1u);
}

TEST(Matcher, NormWithoutRsqrtIsNotRmsNorm) {
  Capture c;
  c.op("aten::pow.Tensor_Scalar", {{1}}, {{3}})
      .op("aten::mean.dim", {{3}}, {{4, {4, 1}}})
      .op("aten::add.Tensor", {{4, {4, 1}}}, {{5, {4, 1}}})
      .op("aten::div.Tensor", {{1}, {5, {4, 1}}}, {{7}});
  EXPECT_TRUE(matches(c.done(), rms_norm_pattern()).empty());
}

TEST(Matcher, SquareOfADifferentTensorIsNotRmsNorm) {
  Capture c;
  c.op("aten::pow.Tensor_Scalar", {{2}}, {{3}})        // pow of tensor 2, scaled tensor is 1
      .op("aten::mean.dim", {{3}}, {{4, {4, 1}}})
      .op("aten::rsqrt", {{4, {4, 1}}}, {{6, {4, 1}}})
      .op("aten::mul.Tensor", {{1}, {6, {4, 1}}}, {{7}});
  EXPECT_TRUE(matches(c.done(), rms_norm_pattern()).empty());
}

TEST(Matcher, BackwardOpsNeverMatch) {
  Capture c;
  c.op("aten::ones_like", {{50, {}}}, {{51, {}}}, 30, "")
      .op("aten::pow.Tensor_Scalar", {{1}}, {{3}}, 30, "")
      .op("aten::mean.dim", {{3}}, {{4, {4, 1}}}, 30, "")
      .op("aten::rsqrt", {{4, {4, 1}}}, {{6, {4, 1}}}, 30, "")
      .op("aten::mul.Tensor", {{1}, {6, {4, 1}}}, {{7}}, 30, "");
  EXPECT_TRUE(matches(c.done(), rms_norm_pattern()).empty());
}

// GELU erf form with the factors in another order: (0.5 * (1 + erf(x * c))) * x.
TEST(Matcher, GeluProductInAnyOrder) {
  Capture c;
  c.op("aten::mul.Tensor", {{1}}, {{2}})
      .op("aten::erf", {{2}}, {{3}})
      .op("aten::add.Tensor", {{3}}, {{4}})
      .op("aten::mul.Tensor", {{4}}, {{5}})
      .op("aten::mul.Tensor", {{5}, {1}}, {{6}});
  auto m = matches(c.done(), gelu_pattern());
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].ops, 5);
}

TEST(Matcher, TanhOfSomethingElseIsNotGelu) {
  Capture c;
  c.op("aten::softplus", {{1}}, {{2}}).op("aten::tanh", {{2}}, {{3}}).op("aten::add.Tensor", {{3}}, {{4}})
      .op("aten::mul.Tensor", {{1}, {4}}, {{5}});
  EXPECT_TRUE(matches(c.done(), gelu_pattern()).empty());
}

TEST(Matcher, SwigluChunkedAndNotMultiplied) {
  Capture c;
  c.op("aten::chunk", {{1, {4, 16}}}, {{2}, {3}})
      .op("aten::silu", {{2}}, {{4}})
      .op("aten::mul.Tensor", {{4}, {3}}, {{5}})
      .op("aten::silu", {{5}}, {{6}})
      .op("aten::add.Tensor", {{6}, {1}}, {{7}});   // silu added, not multiplied
  auto m = matches(c.done(), swiglu_pattern());
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].root, 2u);
}

TEST(Matcher, AttentionThroughViewsWithMaskAndScale) {
  Capture c;
  c.op("aten::transpose.int", {{2}}, {{3}})
      .op("aten::bmm", {{1}, {3}}, {{4}})
      .op("aten::div.Tensor", {{4}}, {{5}})
      .op("aten::masked_fill.Scalar", {{5}, {9}}, {{6}})
      .op("aten::_softmax", {{6}}, {{7}})
      .op("aten::expand", {{7}}, {{8}})
      .op("aten::bmm", {{8}, {10}}, {{11}})
      .op("aten::_softmax", {{11}}, {{12}})
      .op("aten::sum.dim_IntList", {{12}}, {{13}});   // softmax not followed by a matmul
  auto m = matches(c.done(), attention_pattern());
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].root, 6u);
  EXPECT_EQ(m[0].anchor, 4u);
}

// A forward pass that reads 5 parameters (ids 1000, 1010... : leaves of the step) and the
// backward seed: what every optimizer-loop test starts from.
Capture forward_and_backward() {
  Capture c;
  for (int p = 0; p < 5; ++p) c.op("aten::mm", {{10 + p}, {1000 + p * 10}}, {{20 + p}}, 12, "model.layer");
  c.op("aten::ones_like", {{500, {}}}, {{501, {}}}, 20, "");
  return c;
}

TEST(OptimizerLoop, RepeatedChainsAfterBackward) {
  Capture c = forward_and_backward();
  for (int p = 0; p < 5; ++p) {
    int64_t b = 1000 + p * 10;
    c.op("aten::mul_.Tensor", {{b + 1}}, {{b + 1}}, 21, "")
        .op("aten::add_.Tensor", {{b + 1}, {b + 2}}, {{b + 1}}, 21, "")
        .op("aten::sqrt", {{b + 1}}, {{b + 3}}, 21, "")
        .op("aten::addcdiv_", {{b}, {b + 1}, {b + 3}}, {{b}}, 21, "");
  }
  DataflowGraph g(c.done());
  auto loops = find_optimizer_loops(g);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].chains, 5u);
  EXPECT_EQ(loops[0].chain_ops, 4u);
  EXPECT_EQ(loops[0].signature, "mul_,add_,sqrt,addcdiv_");
}

// `for p in model.parameters(): p.data.add_(p.grad, alpha=-lr)`: one op per parameter, written
// through `.data` (another tensor id, the parameter's storage).
TEST(OptimizerLoop, HandWrittenSgdIsOneOpPerParameter) {
  Capture c = forward_and_backward();
  for (int p = 0; p < 5; ++p) {
    int64_t b = 1000 + p * 10;
    c.op("aten::add_.Tensor", {{5000 + p, {4}, b}, {b + 2}}, {{5000 + p, {4}, b}}, 30, "");
  }
  DataflowGraph g(c.done());
  auto loops = find_optimizer_loops(g);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].chains, 5u);
  EXPECT_EQ(loops[0].signature, "add_");
}

// After backward, outside modules, repeated per parameter, but no parameter written:
// clip_grad_norm_ (norms, then mul_ into each .grad) and a helper that builds features.
TEST(OptimizerLoop, ChainsThatWriteNoParameterAreNotOptimizers) {
  Capture c = forward_and_backward();
  for (int p = 0; p < 5; ++p) {
    int64_t grad = 1000 + p * 10 + 2;
    c.op("aten::linalg_vector_norm", {{grad}}, {{7000 + p, {}}}, 40, "");
  }
  for (int p = 0; p < 5; ++p) {
    int64_t grad = 1000 + p * 10 + 2;
    c.op("aten::mul_.Tensor", {{grad}, {7100, {}}}, {{grad}}, 40, "");
  }
  for (int p = 0; p < 5; ++p)
    c.op("aten::pow.Tensor_Scalar", {{8000 + p}}, {{8100 + p}}, 50, "")
        .op("aten::cat", {{8100 + p}, {8000 + p}}, {{8200 + p}}, 50, "");
  DataflowGraph g(c.done());
  EXPECT_TRUE(find_optimizer_loops(g).empty());
}

// One line is one optimizer: Adam's first step (its state made with zeros_like) and its later
// steps are chains of two shapes at the same line, one loop.
TEST(OptimizerLoop, ChainsOfTwoShapesAtOneLineAreOneLoop) {
  Capture c = forward_and_backward();
  for (int p = 0; p < 5; ++p) {
    int64_t b = 1000 + p * 10;
    c.op("aten::zeros_like", {{b}}, {{b + 5}}, 21, "")
        .op("aten::mul_.Tensor", {{b + 5}}, {{b + 5}}, 21, "")
        .op("aten::add_.Tensor", {{b}, {b + 5}}, {{b}}, 21, "");
  }
  // The next step: forward, backward, and the update without the state's creation.
  const int64_t boundary = int64_t(c.t.ops.size() + 1) * 1000 - 1;
  c.t.steps = {Step{1, 0, boundary}, Step{2, boundary, 1'000'000'000}};
  for (int p = 0; p < 5; ++p) c.op("aten::mm", {{30 + p}, {1000 + p * 10}}, {{40 + p}}, 12, "model.layer");
  c.op("aten::ones_like", {{600, {}}}, {{601, {}}}, 20, "");
  for (int p = 0; p < 5; ++p) {
    int64_t b = 1000 + p * 10;
    c.op("aten::mul_.Tensor", {{b + 5}}, {{b + 5}}, 21, "").op("aten::add_.Tensor", {{b}, {b + 5}}, {{b}}, 21, "");
  }
  DataflowGraph g(c.done());
  auto loops = find_optimizer_loops(g);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].chains, 10u);
  EXPECT_EQ(loops[0].other_signatures.size(), 1u);
}

// zero_grad inside an LBFGS closure: `p.grad.zero_()` runs before the first backward of the step
// (forward phase) and again after it. Writing into .grad there does not make .grad a parameter.
TEST(OptimizerLoop, ZeroingGradsBeforeTheForwardIsNoParameterUpdate) {
  Capture c;
  for (int p = 0; p < 5; ++p) c.op("aten::zero_", {{1002 + p * 10}}, {{1002 + p * 10}}, 52, "");
  for (int p = 0; p < 5; ++p) c.op("aten::mm", {{10 + p}, {1000 + p * 10}}, {{20 + p}}, 12, "model.layer");
  c.op("aten::ones_like", {{500, {}}}, {{501, {}}}, 20, "");
  for (int p = 0; p < 5; ++p) c.op("aten::zero_", {{1002 + p * 10}}, {{1002 + p * 10}}, 52, "");
  DataflowGraph g(c.done());
  EXPECT_TRUE(find_optimizer_loops(g).empty());
}

TEST(Patterns, MinimumVersionsComeFromTheKnowledgeBase) {
  EXPECT_FALSE(min_torch_npu(rms_norm_pattern()).empty());
  EXPECT_FALSE(min_torch_npu(attention_pattern()).empty());
  EXPECT_FALSE(min_torch_npu(layer_norm_pattern()).empty());
  for (const PatternSpec* p : all_patterns()) {
    std::string text = std::string(p->api) + std::string(p->snippet);
    EXPECT_EQ(text.find("NpuLayerNorm"), std::string::npos) << p->name;
    EXPECT_EQ(text.find("npu_confusion_transpose"), std::string::npos) << p->name;
    EXPECT_EQ(text.find("npu_silu"), std::string::npos) << p->name;
  }
}

}  // namespace
}  // namespace npud::graph
