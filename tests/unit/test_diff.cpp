// Trace diff: per-name tables add up, findings match by rule + location + op.
#include <gtest/gtest.h>

#include "diff/trace_diff.hpp"

namespace npud {
namespace {

Trace with_ops(std::initializer_list<std::pair<const char*, int64_t>> ops) {
  Trace t;
  int64_t ts = 0;
  for (const auto& [name, dur] : ops) {
    Op op;
    op.name = t.intern(name);
    op.kind = OpKind::Aten;
    op.start_ns = ts;
    op.dur_ns = dur;
    ts += dur + 10;
    t.ops.push_back(op);
  }
  t.finalize();
  return t;
}

TEST(Diff, HostTableCountsAndSums) {
  Trace a = with_ops({{"aten::copy_", 100}, {"aten::copy_", 100}, {"aten::mm", 500}});
  Trace b = with_ops({{"aten::copy_", 100}, {"aten::clone", 40}, {"aten::clone", 40}, {"aten::clone", 40}});
  OpTable t = host_op_table(a, b);
  int64_t sum_ns = 0, sum_count = 0;
  for (const auto& r : t.rows) {
    sum_ns += r.delta_ns();
    sum_count += r.delta_count();
  }
  EXPECT_EQ(sum_ns, t.after_ns - t.before_ns);
  EXPECT_EQ(sum_count, t.after_count - t.before_count);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0].name, "aten::mm");  // largest |delta| first
  EXPECT_EQ(t.rows[0].delta_ns(), -500);
  for (const auto& r : t.rows)
    if (r.name == "aten::clone") EXPECT_EQ(r.delta_count(), 3);
}

Finding finding(const char* rule, const char* file, int line, const char* op) {
  Finding f;
  f.rule = rule;
  f.location.file = file;
  f.location.line = line;
  f.location.op = op;
  return f;
}

TEST(Diff, FindingsMatchAsMultiset) {
  std::vector<Finding> before = {finding("SYNC001", "a.py", 3, "aten::item"), finding("SYNC001", "a.py", 3, "aten::item"),
                                 finding("HOT001", "", 0, "aten::mm")};
  std::vector<Finding> after = {finding("SYNC001", "a.py", 3, "aten::item"), finding("SYNC001", "a.py", 9, "aten::item")};
  TraceDiff d;
  match_findings(before, after, d);
  EXPECT_EQ(d.unchanged, 1u);
  // HOT001 left the ranking: counted apart, not a fixed problem (#30: the diff's fixed/new
  // lists were mostly HOT001 rank churn).
  ASSERT_EQ(d.fixed.size(), 1u);
  EXPECT_EQ(d.fixed[0].rule, "SYNC001");
  EXPECT_EQ(d.ranking_left, 1u);
  EXPECT_EQ(d.ranking_entered, 0u);
  ASSERT_EQ(d.added.size(), 1u);
  EXPECT_EQ(d.added[0].location.line, 9);
  EXPECT_EQ(d.findings_by_rule["SYNC001"], (std::pair<size_t, size_t>{2, 2}));
  EXPECT_EQ(d.findings_by_rule["HOT001"], (std::pair<size_t, size_t>{1, 0}));
}

TEST(Diff, RankingChurnIsNeverANewFinding) {
  std::vector<Finding> before = {finding("HOT001", "", 0, "aten::mm")};
  std::vector<Finding> after = {finding("HOT001", "", 0, "aten::addmm"), finding("HOT001", "", 0, "aten::mm")};
  TraceDiff d;
  match_findings(before, after, d);
  EXPECT_TRUE(d.added.empty());
  EXPECT_TRUE(d.fixed.empty());
  EXPECT_EQ(d.ranking_entered, 1u);
  EXPECT_EQ(d.unchanged, 1u);
}

}  // namespace
}  // namespace npud
