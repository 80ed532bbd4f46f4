// The cluster view on ranks that do not fit: an absurd or inconsistent world size, a rank
// without any time, a rank without step markers among stepped ones, names carrying terminal
// control sequences, a directory listing with a directory named like a rank file and an
// unreadable folder. Each is a variant of a round-3 repro (cluster_world_size_hang,
// cluster_empty_rank_skews, cluster_stepless_rank, cluster_text_escape_injection,
// cluster_unreadable_subdir), made here.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/cluster.hpp"
#include "cluster/cluster_report.hpp"
#include "cluster/rank_summary.hpp"
#include "trace_builder.hpp"
#include "util/directory.hpp"
#include "scratch_path.hpp"

namespace npud::test {
namespace {

namespace fs = std::filesystem;

// `steps` steps of 500 us, each a 120 us matmul then a 60 us all-reduce; without step
// markers when `stepped` is false (the same work, one span).
RankSummary rank(int number, int64_t world_size, int steps = 3, bool stepped = true, double compute_us = 120) {
  TraceBuilder b;
  for (int s = 0; s < steps; ++s) {
    double t0 = 500.0 * s;
    if (stepped) b.step(s + 10, t0, 500);
    b.kernel("matmul_kernel", t0 + 5, compute_us);
    b.kernel("ncclKernel_AllGather_RING_LL", t0 + 130, 60, {.kind = TaskKind::Communication, .stream = 9});
  }
  Trace t = b.build();
  t.source = "node/worker-" + std::to_string(number) + ".json";
  t.set_env("rank", std::to_string(number));
  t.set_env("world_size", std::to_string(world_size));
  return summarize_rank(t, {}, "2.1.0");
}

// What `{"traceEvents": []}` or a metadata-only file summarises to.
RankSummary empty_rank(int number, int64_t world_size) {
  Trace t = TraceBuilder().build();
  t.source = "node/worker-" + std::to_string(number) + ".json";
  t.set_env("rank", std::to_string(number));
  t.set_env("world_size", std::to_string(world_size));
  return summarize_rank(t, {}, "2.1.0");
}

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

TEST(ClusterWorldSize, AnAbsurdWorldSizeIsNotBelievedAndNamesItsFile) {
  std::vector<RankSummary> ranks = {rank(0, 3), rank(1, int64_t(1) << 61), rank(2, 3)};
  ClusterReport rep = build_cluster_report(ranks, "dir");  // returns: no loop over 2^61 ranks
  EXPECT_EQ(rep.world_size, 3);
  EXPECT_EQ(rep.missing_count, 0u);
  ASSERT_EQ(rep.warnings.size(), 1u);
  EXPECT_NE(rep.warnings[0].find("node/worker-1.json records a world size of 2305843009213693952"), std::string::npos)
      << rep.warnings[0];
  std::ostringstream text;
  render_cluster_text(text, rep, false, false);
  EXPECT_NE(text.str().find("warning node/worker-1.json records a world size"), std::string::npos) << text.str();
}

TEST(ClusterWorldSize, MissingRanksOfALargeJobComeFromTheRanksSeen) {
  std::vector<RankSummary> ranks = {rank(0, kMaxWorldSize), rank(3, kMaxWorldSize), rank(70, kMaxWorldSize)};
  ClusterReport rep = build_cluster_report(ranks, "dir");
  EXPECT_EQ(rep.world_size, kMaxWorldSize);
  EXPECT_EQ(rep.missing_count, size_t(kMaxWorldSize) - 3);
  ASSERT_EQ(rep.missing_ranks.size(), 64u);
  EXPECT_EQ(rep.missing_ranks[0], 1);
  EXPECT_EQ(rep.missing_ranks[2], 4);      // 3 is there
  EXPECT_EQ(rep.missing_ranks[63], 65);
  EXPECT_TRUE(rep.warnings.empty());
}

TEST(ClusterWorldSize, ARankNumberPastItsWorldSizeIsNotOneJob) {
  std::vector<RankSummary> ranks = {rank(0, 2), rank(1, 2), rank(7, 2)};
  ranks[2].rank = int64_t(1) << 40;
  ClusterReport rep = build_cluster_report(ranks, "dir");
  EXPECT_TRUE(any_contains(rep.inconsistent, "node/worker-7.json says it is rank 1099511627776 of a world of 2 ranks"));
  EXPECT_EQ(rep.missing_count, 0u);
}

TEST(ClusterOddRanks, ARankWithNoTimeIsNamedAndLeftOutOfTheMedians) {
  std::vector<RankSummary> ranks = {rank(0, 5), rank(1, 5), rank(2, 5), rank(3, 5), empty_rank(4, 5)};
  ClusterReport rep = build_cluster_report(ranks, "dir");
  EXPECT_TRUE(rep.slow.empty()) << rep.slow.front().message;  // before: the good ranks were "host-bound"
  EXPECT_TRUE(any_contains(rep.notes, "rank 4 (node/worker-4.json): no events or no time recorded")) << rep.notes.size();
  ASSERT_EQ(rep.ranks.size(), 5u);
  EXPECT_EQ(rep.ranks[4].steps, 0u);
  EXPECT_LT(rep.ranks[4].step_ns, 0);        // "-" in text, null in JSON
  EXPECT_EQ(rep.median_step_ns, 500e3);
  EXPECT_EQ(rep.missing_count, 0u);          // it is there, only empty
  std::ostringstream json;
  render_cluster_json(json, rep);
  EXPECT_NE(json.str().find("\"step_ns\": null"), std::string::npos);
}

TEST(ClusterOddRanks, IdleTimeExplainedByAStragglerIsNotHostBound) {
  // The rest of cluster_empty_rank_skews once the empty rank is out: with three ranks the
  // others' median of ranks 0 and 1 includes straggler 2, whose idle time is shorter.
  std::vector<RankSummary> ranks = {rank(0, 4), rank(1, 4), rank(2, 4, 3, true, 300), empty_rank(3, 4)};
  ClusterReport rep = build_cluster_report(ranks, "dir");
  ASSERT_EQ(rep.slow.size(), 3u);
  EXPECT_EQ(rep.slow[0].rank, 2);
  EXPECT_EQ(rep.slow[0].dimension, "computing");
  EXPECT_EQ(rep.slow[0].severity, Severity::Warning);
  for (const SlowRank& s : rep.slow) {
    if (s.rank == 2) continue;
    EXPECT_EQ(s.dimension, "free");
    EXPECT_EQ(s.severity, Severity::Info) << s.message;
    EXPECT_NE(s.message.find("waiting for the rank that computes longer (2), not host-bound"), std::string::npos)
        << s.message;
  }
}

TEST(ClusterOddRanks, ARankWithoutStepMarkersIsNotComparedPerStep) {
  std::vector<RankSummary> ranks = {rank(0, 3, 4), rank(1, 3, 4), rank(2, 3, 4, false)};
  ranks[0].findings.push_back({});
  ranks[0].findings.back().rule = "SYNC001";
  ranks[0].findings.back().location.file = "loop.py";
  ranks[0].findings.back().location.line = 9;
  ClusterReport rep = build_cluster_report(ranks, "dir");
  EXPECT_TRUE(rep.slow.empty()) << rep.slow.front().message;  // before: straggler, slow link, host-bound
  EXPECT_TRUE(any_contains(rep.notes, "rank 2 (node/worker-2.json): no ProfilerStep markers"));
  // Its findings still count: SYNC001 of rank 0 alone is a finding only some ranks have.
  ASSERT_EQ(rep.partial.size(), 1u);
  EXPECT_EQ(rep.partial[0].ranks, std::vector<int64_t>{0});
  // Only stepless ranks: compared as they are (whole traces).
  std::vector<RankSummary> flat = {rank(0, 2, 4, false), rank(1, 2, 4, false)};
  ClusterReport both = build_cluster_report(flat, "dir");
  EXPECT_EQ(both.ranks[1].steps, 1u);
  EXPECT_FALSE(any_contains(both.notes, "ProfilerStep"));
}

TEST(ClusterText, NamesFromTheInputsAreEscaped) {
  std::vector<RankSummary> ranks = {rank(0, 2), rank(1, 2)};
  Finding f;
  f.rule = "SYNC001";
  f.message = "aten::item\x1b[2J\x1b[H all ranks OK\r";
  f.location.op = "aten::item\x1b]0;title\x07";
  ranks[1].findings.push_back(f);
  ranks[1].source = "dir/rank\x1b[31m-1.json";
  ranks[1].world_size = int64_t(1) << 50;   // the warning names the source
  ranks[1].warning_count = 1;
  ranks[1].warnings = {"event name \"x\x1b[0m\""};
  ClusterReport rep = build_cluster_report(ranks, "dir\x9b" "2J");
  std::ostringstream text;
  render_cluster_text(text, rep, false, true);
  const std::string out = text.str();
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
  EXPECT_NE(out.find("aten::item\\x1b[2J\\x1b[H all ranks OK\\r"), std::string::npos) << out;
  EXPECT_NE(out.find("rank\\x1b[31m-1.json"), std::string::npos) << out;
}

TEST(ClusterInputs, ADirectoryNamedLikeARankFileIsNamed) {
  fs::path dir = test::scratch_path("npud_test_odd_inputs");
  fs::remove_all(dir);
  fs::create_directories(dir / "worker-5.json");
  std::ofstream(dir / "worker-0.json") << "{}";
  std::ofstream(dir / "worker-1.json.gz") << "";
  std::vector<std::string> skipped;
  std::vector<std::string> inputs = rank_inputs_in(dir.string(), &skipped);
  ASSERT_EQ(inputs.size(), 2u);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("worker-5.json is a directory, not a rank profile"), std::string::npos) << skipped[0];
  fs::remove_all(dir);
}

TEST(Directory, AnUnreadableFolderIsSkippedAndNamed) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any folder";
  fs::path dir = test::scratch_path("npud_test_tree");
  fs::remove_all(dir);
  fs::create_directories(dir / "ASCEND_PROFILER_OUTPUT");
  fs::create_directories(dir / "PROF_000001_other" / "deep");
  std::ofstream(dir / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv") << std::string(1234, 'x');
  std::ofstream(dir / "PROF_000001_other" / "deep" / "f") << std::string(99, 'y');
  fs::permissions(dir / "PROF_000001_other", fs::perms::none);
  std::vector<UnlistedFolder> unlisted;
  EXPECT_EQ(tree_bytes(dir, unlisted), 1234u);
  ASSERT_EQ(unlisted.size(), 1u);
  EXPECT_EQ(unlisted[0].path, dir / "PROF_000001_other");
  fs::permissions(dir / "PROF_000001_other", fs::perms::owner_all);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace npud::test
