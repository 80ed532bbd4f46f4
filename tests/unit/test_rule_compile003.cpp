// COMPILE003: one finding per function dynamo recompiled, at its definition, with the guard.
#include <algorithm>

#include <gtest/gtest.h>

#include "rules/builtin_rules.hpp"
#include "trace_builder.hpp"

using namespace npud;
using npud::test::TraceBuilder;

TEST(COMPILE003, OneFindingPerRecompiledFunctionWithItsGuard) {
  TraceBuilder b;
  b.step(1, 0, 1000);
  b.raw().capture.recompiles.push_back({"train.py", "forward", "tensor 'x' size mismatch at index 0. expected 4, actual 5",
                                        {"self.calls == 1"}, 30, 3, 1});
  b.raw().capture.recompiles.push_back({"train.py", "torch_dynamo_resume_in_forward_at_31", "n == 2", {}, 31, 1, 2});
  auto f = test::run_rule(compile003_rule(), b.build());
  ASSERT_EQ(f.size(), 2u);
  const Finding* shape = f[0].location.line == 30 ? &f[0] : &f[1];
  const Finding* value = f[0].location.line == 30 ? &f[1] : &f[0];
  EXPECT_EQ(shape->location.file, "train.py");
  EXPECT_NE(shape->message.find("recompiles `forward` (3 recompiles): tensor 'x' size mismatch"), std::string::npos) << shape->message;
  EXPECT_NE(shape->fix.find("mark_dynamic"), std::string::npos);       // a shape guard: the shape fix
  EXPECT_EQ(shape->metric("count"), 3);
  EXPECT_EQ(shape->metric("first_step"), 1);
  EXPECT_TRUE(std::any_of(shape->notes.begin(), shape->notes.end(),
                          [](const std::string& n) { return n.find("self.calls == 1") != std::string::npos; }));
  EXPECT_NE(value->message.find("the code after a graph break"), std::string::npos) << value->message;
  EXPECT_EQ(value->fix.find("mark_dynamic"), std::string::npos);       // another guard: the general fix
}

TEST(COMPILE003, QuietWithoutRecompiles) {
  TraceBuilder b;
  b.step(1, 0, 1000);
  b.op("aten::add", 10, 5);
  EXPECT_TRUE(test::run_rule(compile003_rule(), b.build()).empty());
}
