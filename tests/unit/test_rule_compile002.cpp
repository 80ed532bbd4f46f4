// COMPILE002: the graph breaks a capture records become findings at the program's lines.
#include <gtest/gtest.h>

#include "rules/builtin_rules.hpp"
#include "trace_builder.hpp"

using namespace npud;
using npud::test::TraceBuilder;

TEST(COMPILE002, EachGraphBreakIsAFindingAtItsLineWithDynamosReason) {
  TraceBuilder b;
  b.step(1, 0, 1000);
  Trace t = b.build();
  t.capture.graph_breaks.push_back({"train.py", "Data-dependent branching", "Detected data-dependent branching",
                                    "Use `torch.cond`", 18, 3, 0});
  t.capture.graph_breaks.push_back({"train.py", "Unsupported Tensor.item() call", "", "", 32, 1, 1});
  t.capture.graphs_compiled = 9;
  t.capture.graphs_in_steps = 2;
  auto f = test::run_rule(compile002_rule(), t);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].location.file, "train.py");
  EXPECT_EQ(f[0].location.line, 18);
  EXPECT_NE(f[0].message.find("Data-dependent branching"), std::string::npos);
  EXPECT_NE(f[0].message.find("(3 compiles)"), std::string::npos);
  EXPECT_EQ(f[0].metric("count"), 3);
  ASSERT_EQ(f[0].notes.size(), 2u);
  EXPECT_NE(f[0].notes[0].find("torch.cond"), std::string::npos);
  EXPECT_NE(f[0].notes[1].find("compiled 9 graphs"), std::string::npos);
  EXPECT_NE(f[0].fix.find("torchair"), std::string::npos);
  EXPECT_EQ(f[1].notes.size(), 1u);   // no hint given
}

TEST(COMPILE002, QuietWithoutGraphBreaks) {
  TraceBuilder b;
  b.step(1, 0, 1000);
  Trace t = b.build();
  t.capture.graphs_compiled = 4;   // compiled, no break
  EXPECT_TRUE(test::run_rule(compile002_rule(), t).empty());
}
