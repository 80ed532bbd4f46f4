// CONTIG002 and DYNSHAPE001 on hand-written captures: ops with tensor ids, strides and
// outputs, as the capture shim records them.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "rules/builtin_rules.hpp"
#include "rules/capture_rules.hpp"
#include "trace_builder.hpp"

namespace npud {
namespace {

struct T {
  int64_t id;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::string dtype = "float32";
};

// Builds a capture-like Trace: one thread, ops one after another, 10 us each.
class CaptureBuilder {
 public:
  CaptureBuilder() {
    t_.source = "capture.npud.json";
    test::read_as_capture(t_);
  }

  CaptureBuilder& step(int64_t number) {
    close_step();
    step_number_ = number;
    step_start_ = now_;
    return *this;
  }

  CaptureBuilder& op(std::string_view name, std::initializer_list<T> in, std::initializer_list<T> out,
                     std::string file = "model.py", int line = 1, std::string_view module = {}) {
    Op op;
    op.name = t_.intern(name);
    if (!module.empty()) op.module = t_.intern(module);
    op.kind = OpKind::Aten;
    op.pid = op.tid = 1;
    op.start_ns = now_;
    op.dur_ns = 10'000;
    now_ += 11'000;
    uint32_t frame = t_.add_frame(file, line, "forward");
    op.stack = t_.add_stack(std::span<const uint32_t>(&frame, 1));
    op.inputs_begin = uint32_t(t_.tensor_refs.size());
    for (const T& x : in) t_.tensor_refs.push_back(add(x));
    op.inputs_count = uint32_t(in.size());
    op.outputs_begin = uint32_t(t_.tensor_refs.size());
    for (const T& x : out) t_.tensor_refs.push_back(add(x));
    op.outputs_count = uint32_t(out.size());
    t_.ops.push_back(op);
    return *this;
  }

  // Gives the last op a caller: its stack becomes [its line, file:line].
  CaptureBuilder& called_from(std::string file, int line) {
    Op& op = t_.ops.back();
    std::vector<uint32_t> frames(t_.frames_of(op.stack).begin(), t_.frames_of(op.stack).end());
    frames.push_back(t_.add_frame(file, line, "<module>"));
    op.stack = t_.add_stack(frames);
    return *this;
  }

  // Marks the last op as a backward-pass op: of `forward` (its line is that op's), or of an
  // unknown forward op (torch 1.x: the line is loss.backward()'s).
  CaptureBuilder& backward(std::string_view forward = {}) {
    t_.ops.back().backward = true;
    if (!forward.empty()) t_.ops.back().forward_op = t_.intern(forward);
    return *this;
  }

  Trace build() {
    close_step();
    t_.finalize();
    return std::move(t_);
  }

 private:
  uint32_t add(const T& x) {
    TensorMeta m;
    m.id = x.id;
    m.storage = x.id;
    m.dtype = t_.intern(x.dtype);
    m.scalar_type = parse_dtype(x.dtype);
    m.dims_begin = uint32_t(t_.dims.size());
    m.rank = uint8_t(x.shape.size());
    m.has_shape = true;
    m.has_strides = true;
    t_.dims.insert(t_.dims.end(), x.shape.begin(), x.shape.end());
    t_.dims.insert(t_.dims.end(), x.strides.begin(), x.strides.end());
    return t_.add_tensor(m);
  }
  void close_step() {
    if (step_number_ >= 0) t_.steps.push_back({step_number_, step_start_, now_ - step_start_});
    now_ += 1000;
  }

  Trace t_;
  int64_t now_ = 0;
  int64_t step_number_ = -1;
  int64_t step_start_ = 0;
};

std::vector<Finding> contig(const Trace& t) { return test::run_rule(contig002_rule(), t); }
std::vector<Finding> contig001(const Trace& t) { return test::run_rule(contig001_rule(), t); }
std::vector<Finding> dynshape(const Trace& t) { return test::run_rule(dynshape001_rule(), t); }

// --- CONTIG002 ---------------------------------------------------------------------------

TEST(Contig002, SoftmaxOfTransposeNamesTheTransposeLine) {
  CaptureBuilder b;
  b.step(1)
      .op("aten::transpose.int", {{1, {2, 8, 64}, {512, 64, 1}}}, {{2, {2, 64, 8}, {512, 1, 64}}}, "model.py", 10)
      .op("aten::_softmax", {{2, {2, 64, 8}, {512, 1, 64}}}, {{3, {2, 64, 8}, {512, 8, 1}}}, "model.py", 12);
  auto f = contig(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "CONTIG002");
  EXPECT_EQ(f[0].location.op, "aten::_softmax");
  EXPECT_EQ(f[0].location.file, "model.py");
  EXPECT_EQ(f[0].location.line, 12);
  EXPECT_EQ(f[0].metric("bytes"), 2 * 64 * 8 * 4);
  EXPECT_EQ(f[0].metric("input"), 0);
  EXPECT_NE(f[0].message.find("aten::transpose.int at model.py:10"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("strides [512, 1, 64]"), std::string::npos) << f[0].message;
  EXPECT_FALSE(f[0].fix.empty());
}

// matmul on a head-split transpose: PyTorch copies (clone) and regroups (_unsafe_view)
// inside the call; the finding is on the bmm's line and names the transpose two lines up,
// walking back through the expand the matmul added.
TEST(Contig002, ImplicitCopyInsideMatmulIsFoundThroughViews) {
  CaptureBuilder b;
  b.step(1)
      .op("aten::view", {{1, {2, 8, 64}, {512, 64, 1}}}, {{2, {2, 8, 4, 16}, {512, 64, 16, 1}}}, "attn.py", 6)
      .op("aten::transpose.int", {{2, {2, 8, 4, 16}, {512, 64, 16, 1}}}, {{3, {2, 4, 8, 16}, {512, 16, 64, 1}}},
          "attn.py", 6)
      .op("aten::expand", {{3, {2, 4, 8, 16}, {512, 16, 64, 1}}}, {{7, {2, 4, 8, 16}, {512, 16, 64, 1}}}, "attn.py", 8)
      .op("aten::clone", {{7, {2, 4, 8, 16}, {512, 16, 64, 1}}}, {{8, {2, 4, 8, 16}, {512, 128, 16, 1}}}, "attn.py", 8)
      .op("aten::_unsafe_view", {{8, {2, 4, 8, 16}, {512, 128, 16, 1}}}, {{9, {8, 8, 16}, {128, 16, 1}}}, "attn.py", 8)
      .op("aten::bmm", {{9, {8, 8, 16}, {128, 16, 1}}, {12, {8, 16, 8}, {128, 1, 16}}}, {{13, {8, 8, 8}, {64, 8, 1}}},
          "attn.py", 8);
  auto f = contig(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "aten::bmm");
  EXPECT_EQ(f[0].location.line, 8);
  EXPECT_EQ(f[0].metric("input"), 0);   // input 1 is a plain transpose of the last two dims: free
  EXPECT_EQ(f[0].metric("bytes"), 2 * 4 * 8 * 16 * 4);
  EXPECT_NE(f[0].message.find("aten::transpose.int at attn.py:6"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("copies it inside the call"), std::string::npos) << f[0].message;
}

// The same trace seen by CONTIG001: the clone is the bmm call's own copy, which CONTIG002
// reports; one problem is one finding.
TEST(Contig001, CopyInsideAMatmulCallIsLeftToContig002) {
  CaptureBuilder b;
  b.step(1)
      .op("aten::transpose.int", {{2, {2, 8, 4, 16}, {512, 64, 16, 1}}}, {{3, {2, 4, 8, 16}, {512, 16, 64, 1}}},
          "attn.py", 6)
      .op("aten::clone", {{3, {2, 4, 8, 16}, {512, 16, 64, 1}}}, {{8, {2, 4, 8, 16}, {512, 128, 16, 1}}}, "attn.py", 8)
      .op("aten::_unsafe_view", {{8, {2, 4, 8, 16}, {512, 128, 16, 1}}}, {{9, {8, 8, 16}, {128, 16, 1}}}, "attn.py", 8)
      .op("aten::bmm", {{9, {8, 8, 16}, {128, 16, 1}}, {12, {8, 16, 8}, {128, 1, 16}}}, {{13, {8, 8, 8}, {64, 8, 1}}},
          "attn.py", 8);
  Trace t = b.build();
  EXPECT_TRUE(contig001(t).empty());
  EXPECT_EQ(contig(t).size(), 1u);
}

// x.contiguous(memory_format=torch.channels_last) every step: a dense NCHW tensor converted
// to NHWC, which Ascend's convolutions convert back (TransData).
TEST(Contig001, ConversionToChannelsLastIsALayoutCopy) {
  CaptureBuilder b;
  b.step(1);
  b.op("aten::clone", {{1, {16, 3, 32, 32}, {3072, 1024, 32, 1}}}, {{2, {16, 3, 32, 32}, {3072, 1, 96, 3}}},
       "train.py", 59, "");
  auto f = contig001(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.line, 59);
  EXPECT_NE(f[0].fix.find("channels_last"), std::string::npos) << f[0].fix;
}

// `.permute(...).contiguous()` at one line of a block that runs in every layer: one finding.
TEST(Contig001, OneLineInEveryLayerIsOneFinding) {
  CaptureBuilder b;
  b.step(1);
  for (int layer = 0; layer < 3; ++layer) {
    std::string module = "model.blocks." + std::to_string(layer) + ".attn";
    int64_t id = 10 * (layer + 1);
    b.op("aten::permute", {{id, {16, 8, 16}, {128, 16, 1}}}, {{id + 1, {8, 16, 16}, {16, 128, 1}}}, "block.py", 7,
         module)
        .op("aten::clone", {{id + 1, {8, 16, 16}, {16, 128, 1}}}, {{id + 2, {8, 16, 16}, {256, 16, 1}}}, "block.py",
            7, module)
        .op("aten::_softmax", {{id + 2, {8, 16, 16}, {256, 16, 1}}}, {{id + 3, {8, 16, 16}, {256, 16, 1}}},
            "block.py", 8, module);
  }
  auto f = contig001(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.line, 7);
  EXPECT_EQ(f[0].metric("count"), 3);
  ASSERT_FALSE(f[0].notes.empty());
  EXPECT_NE(f[0].notes.back().find("3 modules: model.blocks.0.attn, model.blocks.1.attn, model.blocks.2.attn"),
            std::string::npos) << f[0].notes.back();
}

// The backward pass: a strided gradient at a forward line adds to that line's finding; with the
// forward op unknown (torch 1.x) it carries the loss.backward() line and is not counted.
TEST(Contig002, BackwardOpsJoinTheirForwardLineOrAreSkipped) {
  CaptureBuilder b;
  // [8, 128, 64] read through a [B, T, H] -> [B, H, T] permute: not a last-two-dims swap.
  b.step(1)
      .op("aten::softmax.int", {{2, {8, 128, 64}, {8192, 1, 128}}}, {{3, {8, 128, 64}, {8192, 64, 1}}}, "model.py", 41)
      .op("aten::softmax.int", {{4, {8, 128, 64}, {8192, 1, 128}}}, {{5, {8, 128, 64}, {8192, 64, 1}}}, "model.py", 41)
      .backward("aten::softmax.int")
      .op("aten::softmax.int", {{6, {8, 128, 64}, {8192, 1, 128}}}, {{7, {8, 128, 64}, {8192, 64, 1}}}, "train.py", 90)
      .backward()
      .op("aten::softmax.int", {{8, {8, 128, 64}, {8192, 1, 128}}}, {{9, {8, 128, 64}, {8192, 64, 1}}}, "model.py", 77)
      .backward("aten::softmax.int");
  auto f = contig(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.line, 41);
  EXPECT_EQ(f[0].metric("count"), 2);   // the forward softmax and its backward
}

TEST(Contig002, ContiguousAndTransposedMatmulOperandsAreClean) {
  CaptureBuilder b;
  b.step(1)
      .op("aten::t", {{1, {64, 32}, {32, 1}}}, {{2, {32, 64}, {1, 32}}}, "m.py", 3)
      .op("aten::addmm", {{3, {64}, {1}}, {4, {16, 32}, {32, 1}}, {2, {32, 64}, {1, 32}}},
          {{5, {16, 64}, {64, 1}}}, "m.py", 3)
      // broadcast bias (stride 0) and size-1 dims are not strided reads
      .op("aten::add.Tensor", {{5, {16, 64}, {64, 1}}, {6, {16, 64}, {0, 1}}}, {{7, {16, 64}, {64, 1}}}, "m.py", 4)
      .op("aten::native_layer_norm", {{7, {16, 1, 64}, {64, 999, 1}}}, {{8, {16, 1, 64}, {64, 64, 1}}}, "m.py", 5);
  EXPECT_TRUE(contig(b.build()).empty());
}

// An explicit .contiguous() on its own line is CONTIG001's business, not an implicit copy.
TEST(Contig002, ExplicitContiguousOnAnotherLineIsNotImplicit) {
  CaptureBuilder b;
  b.step(1)
      .op("aten::permute", {{1, {4, 8, 16}, {128, 16, 1}}}, {{2, {8, 4, 16}, {16, 128, 1}}}, "m.py", 3)
      .op("aten::clone", {{2, {8, 4, 16}, {16, 128, 1}}}, {{3, {8, 4, 16}, {64, 16, 1}}}, "m.py", 3)
      .op("aten::_unsafe_view", {{3, {8, 4, 16}, {64, 16, 1}}}, {{4, {32, 16}, {16, 1}}}, "m.py", 4)
      .op("aten::mm", {{4, {32, 16}, {16, 1}}, {5, {16, 16}, {16, 1}}}, {{6, {32, 16}, {16, 1}}}, "m.py", 4);
  EXPECT_TRUE(contig(b.build()).empty());
}

TEST(Contig002, SmallElementwiseIsIgnoredLargeIsFlagged) {
  CaptureBuilder b;
  b.step(1)
      .op("aten::mul.Tensor", {{1, {8, 8}, {1, 8}}, {2, {8, 8}, {8, 1}}}, {{3, {8, 8}, {8, 1}}}, "m.py", 3)
      .op("aten::mul.Tensor", {{4, {1024, 1024}, {1, 1024}}, {5, {1024, 1024}, {1024, 1}}},
          {{6, {1024, 1024}, {1024, 1}}}, "m.py", 4);
  auto f = contig(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.line, 4);
  EXPECT_EQ(f[0].severity, Severity::Warning);   // 4 MiB per step
}

TEST(Contig002, CountsCallsPerStep) {
  CaptureBuilder b;
  for (int s = 1; s <= 3; ++s) {
    b.step(s);
    for (int k = 0; k < 2; ++k) {
      int64_t base = s * 100 + k * 10;
      b.op("aten::permute", {{base, {2, 8, 64}, {512, 64, 1}}}, {{base + 1, {2, 64, 8}, {512, 1, 64}}}, "m.py", 7)
          .op("aten::_log_softmax", {{base + 1, {2, 64, 8}, {512, 1, 64}}}, {{base + 2, {2, 64, 8}, {512, 8, 1}}},
              "m.py", 8);
    }
  }
  auto f = contig(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].metric("count"), 6);
  EXPECT_DOUBLE_EQ(f[0].metric("per_step"), 2.0);
}

TEST(Contig002, TraceWithoutStridesHasNoFinding) {
  test::TraceBuilder b;
  b.step(1, 0, 100).op("aten::_softmax", 10, 5, {.inputs = {{"float", {2, 64, 8}, {}}}});
  EXPECT_TRUE(contig(b.build()).empty());
}

// --- DYNSHAPE001 -------------------------------------------------------------------------

TEST(Dynshape001, ShapeChangingEveryStepIsFlaggedOncePerLine) {
  CaptureBuilder b;
  const int64_t lengths[] = {17, 23, 31};
  int64_t id = 1;
  for (int s = 0; s < 3; ++s) {
    int64_t n = lengths[s];
    b.step(s + 1)
        .op("aten::mm", {{id, {n, 64}, {64, 1}}, {1000, {64, 64}, {64, 1}}}, {{id + 1, {n, 64}, {64, 1}}}, "train.py", 40)
        .op("aten::add.Tensor", {{id + 1, {n, 64}, {64, 1}}, {1001, {64}, {1}}}, {{id + 2, {n, 64}, {64, 1}}},
            "train.py", 40)
        // a fixed-shape op at another line
        .op("aten::mm", {{2000, {8, 64}, {64, 1}}, {1000, {64, 64}, {64, 1}}}, {{id + 3, {8, 64}, {64, 1}}},
            "train.py", 50);
    id += 10;
  }
  auto f = dynshape(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "DYNSHAPE001");
  EXPECT_EQ(f[0].location.file, "train.py");
  EXPECT_EQ(f[0].location.line, 40);
  EXPECT_EQ(f[0].metric("distinct_shapes"), 3);
  EXPECT_EQ(f[0].metric("steps"), 3);
  EXPECT_EQ(f[0].metric("ops"), 2);
  EXPECT_NE(f[0].message.find("[17,64]"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("aten::add.Tensor, aten::mm"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].fix.find("pad"), std::string::npos);
}

// A sequence length that varies reaches every line after it: one finding at the first line,
// the others as notes; a line whose shapes change in other steps is another cause.
TEST(Dynshape001, LinesChangingInTheSameStepsAreOneCause) {
  CaptureBuilder b;
  const int64_t lengths[] = {17, 23, 31, 31};
  int64_t id = 1;
  for (int s = 0; s < 4; ++s) {
    int64_t n = lengths[s];
    int64_t last = s == 3 ? 5 : 8;   // a short last batch: another cause, in step 4 only
    b.step(s + 1)
        .op("aten::embedding", {{1000, {512, 64}, {64, 1}}, {id, {8, n}, {n, 1}}}, {{id + 1, {8, n, 64}, {n * 64, 64, 1}}},
            "model.py", 10)
        .op("aten::mm", {{id + 1, {8 * n, 64}, {64, 1}}, {1001, {64, 64}, {64, 1}}}, {{id + 2, {8 * n, 64}, {64, 1}}},
            "model.py", 20)
        .op("aten::gelu", {{id + 2, {8 * n, 64}, {64, 1}}}, {{id + 3, {8 * n, 64}, {64, 1}}}, "model.py", 30)
        .op("aten::mm", {{id + 4, {last, 64}, {64, 1}}, {1001, {64, 64}, {64, 1}}}, {{id + 5, {last, 64}, {64, 1}}},
            "head.py", 5);
    id += 10;
  }
  auto f = dynshape(b.build());
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].location.line, 10);
  EXPECT_EQ(f[0].metric("sites"), 3);
  EXPECT_EQ(f[0].metric("new_shapes"), 6);   // two new shapes at each of three lines
  ASSERT_EQ(f[0].notes.size(), 3u);           // the cost note, then the two other lines
  EXPECT_NE(f[0].notes[1].find("model.py:20"), std::string::npos) << f[0].notes[1];
  EXPECT_NE(f[0].notes[2].find("model.py:30"), std::string::npos) << f[0].notes[2];
  EXPECT_NE(f[0].message.find("2 more call sites change shape with it"), std::string::npos) << f[0].message;
  EXPECT_EQ(f[1].location.file, "head.py");
  EXPECT_EQ(f[1].metric("sites"), 1);
}

// The "N distinct shapes" of the message is the distinct_shapes metric, also when a site with
// more shapes merges into the finding (issue 30: "3 distinct shapes" beside distinct_shapes=6).
TEST(Dynshape001, MergedFindingSaysTheNumberOfItsMetric) {
  CaptureBuilder b;
  const int64_t lengths[] = {17, 23, 31};
  int64_t id = 1;
  for (int s = 0; s < 3; ++s) {
    int64_t n = lengths[s];
    b.step(s + 1)
        .op("aten::embedding", {{1000, {512, 64}, {64, 1}}, {id, {8, n}, {n, 1}}}, {{id + 1, {8, n, 64}, {n * 64, 64, 1}}},
            "model.py", 10)
        // two sizes per step at the next line: 6 distinct shapes, changing in the same steps
        .op("aten::gelu", {{id + 1, {8 * n, 64}, {64, 1}}}, {{id + 2, {8 * n, 64}, {64, 1}}}, "model.py", 20)
        .op("aten::gelu", {{id + 3, {16 * n, 64}, {64, 1}}}, {{id + 4, {16 * n, 64}, {64, 1}}}, "model.py", 20);
    id += 10;
  }
  auto f = dynshape(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].metric("sites"), 2);
  const std::string& m = f[0].message;
  size_t at = m.find(" distinct shapes");
  ASSERT_NE(at, std::string::npos) << m;
  size_t digits = m.find_last_not_of("0123456789", at - 1) + 1;
  EXPECT_EQ(std::stod(m.substr(digits, at - digits)), f[0].metric("distinct_shapes")) << m;
}

// A short batch reaches the logging after optimizer.step() one step after the DataLoader's
// collate line: other steps, the same sizes (16 -> 12), one cause, led by the line that changed first.
TEST(Dynshape001, ShortBatchSeenInDifferentStepsIsOneCause) {
  CaptureBuilder b;
  const int64_t collate[] = {16, 12, 16};
  const int64_t logging[] = {16, 16, 12};   // the previous iteration's batch
  int64_t id = 1;
  for (int s = 0; s < 3; ++s) {
    b.step(s + 1)
        .op("aten::argmax", {{id, {logging[s], 3}, {3, 1}}}, {{id + 1, {logging[s]}, {1}}}, "train.py", 90)
        .op("aten::stack", {{id + 2, {collate[s], 12}, {12, 1}}}, {{id + 3, {collate[s], 12}, {12, 1}}}, "train.py", 82);
    id += 10;
  }
  auto f = dynshape(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.line, 82);
  EXPECT_EQ(f[0].metric("sites"), 2);
}

// An eval pass with a larger batch every other step: the model's line shows the new shape,
// the eval loop's call is where it comes from.
TEST(Dynshape001, ANewShapeFromAnotherCallerNamesThatCaller) {
  CaptureBuilder b;
  for (int s = 0; s < 3; ++s) {
    b.step(s + 1).op("aten::addmm", {{1, {8, 64}, {64, 1}}}, {{2, {8, 10}, {10, 1}}}, "model.py", 17).called_from(
        "train.py", 32);
    if (s == 1)
      b.op("aten::addmm", {{3, {32, 64}, {64, 1}}}, {{4, {32, 10}, {10, 1}}}, "model.py", 17).called_from("train.py", 47);
  }
  auto f = dynshape(b.build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.file, "train.py");
  EXPECT_EQ(f[0].location.line, 47);
  EXPECT_NE(f[0].message.find("(inside model.py:17)"), std::string::npos) << f[0].message;
}

// A line that sees two shapes in every step (e.g. a helper called for q and for kv) is
// steady after the first step: no recompilation, no finding.
TEST(Dynshape001, SameSetOfShapesEveryStepIsClean) {
  CaptureBuilder b;
  for (int s = 0; s < 3; ++s) {
    b.step(s + 1)
        .op("aten::mul.Tensor", {{1, {4, 8}, {8, 1}}}, {{2, {4, 8}, {8, 1}}}, "h.py", 5)
        .op("aten::mul.Tensor", {{3, {4, 16}, {16, 1}}}, {{4, {4, 16}, {16, 1}}}, "h.py", 5);
  }
  EXPECT_TRUE(dynshape(b.build()).empty());
}

TEST(Dynshape001, NeedsTwoSteps) {
  CaptureBuilder b;
  b.step(1)
      .op("aten::mm", {{1, {3, 4}, {4, 1}}}, {{2, {3, 4}, {4, 1}}}, "t.py", 1)
      .op("aten::mm", {{3, {5, 4}, {4, 1}}}, {{4, {5, 4}, {4, 1}}}, "t.py", 1);
  EXPECT_TRUE(dynshape(b.build()).empty());
}

TEST(Dynshape001, ViewsAreNotCompilations) {
  CaptureBuilder b;
  for (int s = 0; s < 2; ++s) {
    int64_t n = 10 + s;
    b.step(s + 1).op("aten::view", {{1, {n, 4}, {4, 1}}}, {{2, {n * 4}, {1}}}, "t.py", 3);
  }
  EXPECT_TRUE(dynshape(b.build()).empty());
}

// CAPTURE001 says how many of the requested steps are complete and which step a kill cut off
// (issue 31 F-19); "all" has no count to compare with.
TEST(Capture001, KilledCaptureSaysCompleteStepsOfTheRequested) {
  for (std::string_view spec : {"1:100", "all"}) {
    test::TraceBuilder b;
    b.capture();
    b.raw().capture.ended = false;
    b.raw().capture.reason.clear();
    b.raw().capture.unended_step = 3;
    b.raw().capture.unended_step_ops = 7;
    b.raw().set_env("steps", spec);
    b.step(1, 0, 100).step(2, 100, 100);
    b.op("aten::mm", 10, 5);
    auto f = test::run_rule(capture001_rule(), b.build());
    ASSERT_EQ(f.size(), 1u);
    EXPECT_NE(f[0].message.find("no end record"), std::string::npos) << f[0].message;
    std::string want = spec == "all" ? "2 complete steps (--steps all)" : "2 of the 100 requested steps (--steps 1:100) complete";
    EXPECT_NE(f[0].message.find(want), std::string::npos) << f[0].message;
    EXPECT_NE(f[0].message.find("step 3 was cut off after 7 ops"), std::string::npos) << f[0].message;
  }
}

}  // namespace
}  // namespace npud
