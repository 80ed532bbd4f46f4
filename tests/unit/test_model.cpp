// The event model: interning, nesting/self time, step assignment, shape helpers.
#include <gtest/gtest.h>

#include "model/trace.hpp"

namespace npud {
namespace {

TEST(StringPool, InternsOnceAndKeepsEmptyAsZero) {
  StringPool pool;
  EXPECT_EQ(pool.intern(""), 0u);
  StrId a = pool.intern("aten::mm");
  StrId b = pool.intern(std::string("aten::") + "mm");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, pool.intern("aten::bmm"));
  EXPECT_EQ(pool.view(a), "aten::mm");
  EXPECT_EQ(pool.find("nope"), StringPool::kMissing);
  // Views stay valid while the pool grows past many blocks.
  std::string_view first = pool.view(a);
  for (int i = 0; i < 100000; ++i) pool.intern("op" + std::to_string(i));
  EXPECT_EQ(first, "aten::mm");
  EXPECT_EQ(pool.view(pool.find("op99999")), "op99999");
}

Op make_op(Trace& t, std::string_view name, int64_t start, int64_t dur, int tid = 1) {
  Op op;
  op.name = t.intern(name);
  op.kind = OpKind::Aten;
  op.pid = 1;
  op.tid = tid;
  op.start_ns = start;
  op.dur_ns = dur;
  return op;
}

TEST(Trace, FinalizeNestsOpsAndComputesSelfTime) {
  Trace t;
  // Given out of order on purpose: finalize sorts.
  t.ops.push_back(make_op(t, "aten::add", 20, 10));
  t.ops.push_back(make_op(t, "aten::linear", 0, 100));
  t.ops.push_back(make_op(t, "aten::mm", 40, 50));
  t.ops.push_back(make_op(t, "aten::other_thread", 0, 100, 2));
  t.steps.push_back({7, 0, 60});
  t.finalize();
  ASSERT_EQ(t.str(t.ops[0].name), "aten::linear");
  EXPECT_EQ(t.ops[0].parent, kNone);
  EXPECT_EQ(t.ops[0].self_ns, 40);
  EXPECT_EQ(t.ops[1].parent, 0u);
  EXPECT_EQ(t.ops[2].parent, 0u);
  EXPECT_EQ(t.ops[3].parent, kNone);  // other thread: no parent across threads
  EXPECT_EQ(t.ops[1].step_index, 0);        // starts at 20, inside step [0, 60)
  EXPECT_EQ(t.ops[2].step_index, 0);
  EXPECT_EQ(t.step_at(60), -1);
  EXPECT_EQ(t.span_ns(), 100);
}

TEST(Trace, FramesStacksAndEnv) {
  Trace t;
  uint32_t f0 = t.add_frame("train.py", 42, "forward");
  uint32_t f1 = t.add_frame("train.py", 90, "main");
  std::vector<uint32_t> ids{f0, f1};
  Op op = make_op(t, "aten::item", 0, 1);
  op.stack = t.add_stack(ids);
  t.ops.push_back(op);
  ASSERT_NE(t.user_frame(t.ops[0]), nullptr);
  EXPECT_EQ(t.str(t.user_frame(t.ops[0])->file), "train.py");
  EXPECT_EQ(t.user_frame(t.ops[0])->line, 42);
  t.set_env("torch", "1.13");
  t.set_env("torch", "2.1");
  EXPECT_EQ(t.env_value("torch"), "2.1");
  EXPECT_EQ(t.env.size(), 1u);
  EXPECT_EQ(t.env_value("missing"), "");
}

TEST(Shapes, ContiguityAndSizes) {
  std::vector<int64_t> shape{2, 3, 4};
  EXPECT_TRUE(is_contiguous(shape, std::vector<int64_t>{12, 4, 1}));
  EXPECT_FALSE(is_contiguous(shape, std::vector<int64_t>{1, 2, 6}));  // a permuted view
  EXPECT_TRUE(is_contiguous(std::vector<int64_t>{1, 5}, std::vector<int64_t>{99, 1}));  // size-1 dim
  EXPECT_EQ(numel(shape), 24);
  EXPECT_EQ(numel(std::vector<int64_t>{}), 1);  // a scalar
  EXPECT_EQ(numel(std::vector<int64_t>{int64_t(1) << 40, int64_t(1) << 40}), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(dtype_size("float32"), 4u);
  EXPECT_EQ(dtype_size("c10::Half"), 2u);
  EXPECT_EQ(dtype_size("DT_BF16"), 2u);
  EXPECT_EQ(dtype_size("torch.int64"), 8u);
  EXPECT_EQ(dtype_size("Scalar"), 0u);
}

}  // namespace
}  // namespace npud
