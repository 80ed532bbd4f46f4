// The cluster view: per-rank step breakdown, rank summaries (write, read, bad input), slow
// ranks and waits across ranks, findings only some ranks have; msprof-analyze's cluster
// output and the multi-rank Kineto fixture from ../shared (skipped when absent).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/cluster.hpp"
#include "cluster/cluster_input.hpp"
#include "cluster/cluster_report.hpp"
#include "cluster/merged_summary.hpp"
#include "cluster/msprof_ranks.hpp"
#include "cluster/rank_summary.hpp"
#include "util/input_error.hpp"
#include "ingest/reader.hpp"
#include "trace_builder.hpp"
#include "scratch_path.hpp"
#include "require_fixture.hpp"

namespace npud::test {
namespace {

namespace fs = std::filesystem;

const std::string kShared = NPUD_SHARED_DIR;


constexpr const char* kAllReduce = "ncclKernel_AllReduce_RING_LL_Sum_float";

// Two steps of 1000 us: compute kernels of `compute_us` each step, then an all-reduce of
// `comm_us` that overlaps the last 50 us of compute.
Trace rank_trace(int rank, double compute_us, double comm_us) {
  TraceBuilder b;
  for (int s = 0; s < 2; ++s) {
    double t0 = 1000.0 * s;
    b.step(s + 1, t0, 1000);
    b.kernel("gemm", t0 + 10, compute_us);
    b.kernel(kAllReduce, t0 + 10 + compute_us - 50, comm_us, {.kind = TaskKind::Communication, .stream = 8});
  }
  Trace t = b.build();
  t.set_env("rank", std::to_string(rank));
  t.set_env("world_size", "4");
  return t;
}

Finding finding(std::string rule, std::string file, int line, Severity sev = Severity::Warning) {
  Finding f;
  f.rule = std::move(rule);
  f.severity = sev;
  f.message = "m";
  f.location.file = std::move(file);
  f.location.line = line;
  return f;
}

TEST(RankSummary, StepBreakdownSplitsComputeCommunicationOverlapAndFree) {
  RankSummary s = summarize_rank(rank_trace(2, 400, 200), {}, "2.1.0");
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.world_size, 4);
  ASSERT_EQ(s.steps.size(), 2u);
  const StepBreakdown& b = s.steps[0];
  EXPECT_EQ(b.number, 1);
  EXPECT_EQ(b.step_ns, us(1000));
  EXPECT_EQ(b.computing_ns, us(400));
  EXPECT_EQ(b.communication_ns, us(200));
  EXPECT_EQ(b.overlapped_ns, us(50));
  EXPECT_EQ(b.free_ns, us(1000 - 550));
  ASSERT_EQ(s.collectives.size(), 2u);
  EXPECT_EQ(s.collective_names.at(s.collectives[1].name), kAllReduce);
  EXPECT_EQ(s.collectives[1].step_number, 2);
}

TEST(RankSummary, RankFromTheFileNameWhenTheTraceHasNone) {
  EXPECT_EQ(rank_in_path("/x/sampled_rank-12.json.gz"), 12);
  EXPECT_EQ(rank_in_path("/x/trace_rank_3.pt.trace.json"), 3);
  EXPECT_EQ(rank_in_path("/x/Rank7.json"), 7);
  EXPECT_EQ(rank_in_path("/x/worker0.json"), -1);
  // torch_npu names each run's rank in profiler_info_<rank>.json.
  const fs::path root = test::scratch_path("npud_test_run");
  fs::path run = root / "host_1_ascend_pt";
  fs::create_directories(run / "ASCEND_PROFILER_OUTPUT");
  std::ofstream(run / "profiler_info_5.json") << "{}";
  EXPECT_EQ(rank_in_path(run.string()), 5);
  EXPECT_EQ(rank_in_path((run / "ASCEND_PROFILER_OUTPUT").string()), 5);
  fs::remove_all(root);
}

TEST(RankSummary, WrittenAndReadBackUnchanged) {
  RankSummary s = summarize_rank(rank_trace(1, 300, 100), {finding("SYNC001", "train.py", 42, Severity::Error)}, "2.1.0");
  fs::path p = test::scratch_path("npud_test_rank1", ".json");
  {
    std::ofstream out(p);
    write_rank_summary(out, s);
  }
  EXPECT_TRUE(is_rank_summary_file(p.string()));
  RankSummary r = read_rank_summary(p.string());
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.torch_npu, "2.1.0");
  ASSERT_EQ(r.steps.size(), s.steps.size());
  EXPECT_EQ(r.steps[1].computing_ns, s.steps[1].computing_ns);
  EXPECT_EQ(r.steps[1].overlapped_ns, s.steps[1].overlapped_ns);
  EXPECT_EQ(r.steps[1].comm_wait_ns, -1);
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[0].dur_ns, us(100));
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].rule, "SYNC001");
  EXPECT_EQ(r.findings[0].severity, Severity::Error);
  EXPECT_EQ(r.findings[0].location.line, 42);
  fs::remove(p);
}

TEST(RankSummary, BadInputNamesTheFileAndWhere) {
  fs::path p = test::scratch_path("npud_test_bad_summary", ".json");
  std::ofstream(p) << R"({"kind": "npu-doctor-rank-summary", "steps": [1, 2,, 3]})";
  try {
    read_rank_summary(p.string());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), p.string());
    EXPECT_NE(std::string(e.what()).find("invalid JSON"), std::string::npos) << e.what();
    EXPECT_EQ(e.offset(), 51u);  // the second comma after 2
  }
  std::ofstream(p) << R"({"kind": "npu-doctor-rank-summary", "source": "cut of)";
  try {
    read_rank_summary(p.string());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.offset(), 53u);  // the end (53 bytes): a cut-off file
  }
  std::ofstream(p) << R"({"traceEvents": []})";
  try {
    read_rank_summary(p.string());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a rank summary"), std::string::npos) << e.what();
  }
  std::ofstream(p) << R"({"kind": "npu-doctor-rank-summary", "steps": [{"step": 1}], "collective_names": [],
                          "collectives": [], "findings": []})";
  EXPECT_THROW(read_rank_summary(p.string()), InputError);  // a step without its times
  fs::remove(p);
}

TEST(ClusterReport, AStragglerIsFoundAndTheOthersWaitForIt) {
  // Rank 3 computes 300 us longer; the others' all-reduce lasts 300 us longer (waiting).
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 4; ++r)
    ranks.push_back(summarize_rank(r == 3 ? rank_trace(r, 700, 100) : rank_trace(r, 400, 400), {}, "2.1.0"));
  ClusterReport rep = build_cluster_report(ranks, "dir");
  EXPECT_EQ(rep.wait_basis, "estimated from collectives");
  ASSERT_EQ(rep.ranks.size(), 4u);
  EXPECT_NEAR(rep.ranks[0].comm_wait_ns, us(300), 1);
  EXPECT_NEAR(rep.ranks[3].comm_wait_ns, 0, 1);
  ASSERT_FALSE(rep.slow.empty());
  EXPECT_EQ(rep.slow[0].rank, 3);
  EXPECT_EQ(rep.slow[0].dimension, "computing");
  EXPECT_EQ(rep.slow[0].severity, Severity::Warning);
  EXPECT_NEAR(rep.slow[0].value_ns - rep.slow[0].median_ns, us(300), 1);
  EXPECT_NE(rep.slow[0].message.find("straggler"), std::string::npos);
  // The waiting ranks are not reported as slow: their wait is the same as each other's.
  for (const SlowRank& s : rep.slow) EXPECT_EQ(s.rank, 3) << s.message;
  EXPECT_TRUE(rep.missing_ranks.empty());
}

// Issue 46: folds compose. Two halves folded apart, written as merged summaries, read back and
// folded together give the report of all ranks folded at once; findings every rank has are held
// once; a key keeps the shortest duration, so the waits do not change.
TEST(ClusterInput, HalvesFoldedApartAndTogetherGiveTheFlatReport) {
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 4; ++r) {
    std::vector<Finding> fs{finding("SYNC001", "train.py", 10)};
    if (r == 2) fs.push_back(finding("FALLBACK001", "train.py", 20));
    ranks.push_back(summarize_rank(r == 3 ? rank_trace(r, 700, 100) : rank_trace(r, 400, 400), fs, "2.1.0"));
  }
  ClusterInput flat;
  for (const RankSummary& s : ranks) flat.add(s);
  EXPECT_EQ(flat.findings.size(), 2u);
  EXPECT_EQ(flat.patterns.size(), 1u);   // one group (unrecorded), the same collectives on every rank
  fs::path dir = scratch_path("cluster_halves");
  fs::create_directories(dir);
  ClusterInput folded;
  for (int half = 0; half < 2; ++half) {
    ClusterInput part;
    part.add(ranks[size_t(2 * half + 1)]);   // out of rank order on purpose
    part.add(ranks[size_t(2 * half)]);
    std::string path = (dir / fmt::format("part{}.json", half)).string();
    std::ofstream(path) << [&] {
      std::ostringstream os;
      write_merged_summary(os, part, "part");
      return os.str();
    }();
    read_merged_summary(path, folded);
  }
  ClusterReport a = build_cluster_report(flat, "dir"), b = build_cluster_report(folded, "dir");
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    EXPECT_EQ(a.ranks[i].rank, b.ranks[i].rank);
    EXPECT_EQ(a.ranks[i].comm_wait_ns, b.ranks[i].comm_wait_ns);
    EXPECT_EQ(a.ranks[i].findings, b.ranks[i].findings);
  }
  EXPECT_NEAR(b.ranks[0].comm_wait_ns, us(300), 1);
  EXPECT_EQ(a.median_step_ns, b.median_step_ns);
  ASSERT_EQ(b.slow.size(), a.slow.size());
  EXPECT_EQ(b.slow[0].rank, 3);
  EXPECT_EQ(b.slow[0].message, a.slow[0].message);
  ASSERT_EQ(b.partial.size(), 1u);
  EXPECT_EQ(b.partial[0].ranks, std::vector<int64_t>{2});
  EXPECT_EQ(b.common.size(), 1u);
  fs::remove_all(dir);
}

// A collective matches only the same collective of its own process group: same-named all-reduces
// of two groups with different durations are no wait.
TEST(ClusterInput, CollectivesMatchWithinTheirProcessGroup) {
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 4; ++r) {
    RankSummary s = summarize_rank(rank_trace(r, 400, r < 2 ? 100 : 500), {}, "2.1.0");
    s.group_names = {r < 2 ? "1 [0, 1]" : "2 [2, 3]"};
    for (Collective& c : s.collectives) c.group = 0;
    ranks.push_back(std::move(s));
  }
  ClusterReport rep = build_cluster_report(ranks, "dir");
  for (const RankRow& row : rep.ranks) EXPECT_EQ(row.comm_wait_ns, 0) << row.rank;
  for (const SlowRank& s : rep.slow) ADD_FAILURE() << s.message;
  // The same ranks without their groups: ranks 2 and 3 seem to wait 400 us per step.
  for (RankSummary& s : ranks) {
    s.group_names.clear();
    for (Collective& c : s.collectives) c.group = kNoGroup;
  }
  EXPECT_NEAR(build_cluster_report(ranks, "dir").ranks[2].comm_wait_ns, us(400), 1);
}

TEST(ClusterReport, FindingsOnlySomeRanksHaveListTheirRanks) {
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 3; ++r) {
    std::vector<Finding> f = {finding("FUSE001", "model.py", 10)};
    if (r == 0) f.push_back(finding("SYNC001", "train.py", 88, Severity::Error));  // rank 0 logs loss.item()
    if (r == 2) f.push_back(finding("FALLBACK002", "data.py", 5));
    f.push_back(finding("HOT001", "", 0, Severity::Info));  // rankings differ by rank: never compared
    ranks.push_back(summarize_rank(rank_trace(r, 400, 200), f, "2.1.0"));
  }
  ClusterReport rep = build_cluster_report(ranks, "dir");
  ASSERT_EQ(rep.common.size(), 1u);
  EXPECT_EQ(rep.common[0].rule, "FUSE001");
  ASSERT_EQ(rep.partial.size(), 2u);
  EXPECT_EQ(rep.partial[0].finding.rule, "SYNC001");  // worst first
  EXPECT_EQ(rep.partial[0].ranks, std::vector<int64_t>{0});
  EXPECT_EQ(rep.partial[1].ranks, std::vector<int64_t>{2});
  EXPECT_EQ(rep.world_size, 4);
  EXPECT_EQ(rep.missing_ranks, std::vector<int64_t>{3});
  EXPECT_EQ(worst_severity(rep), Severity::Error);
  std::ostringstream text;
  render_cluster_text(text, rep, false, false);
  EXPECT_NE(text.str().find("SYNC001 train.py:88 on rank 0"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("1 rank without a profile: 3"), std::string::npos) << text.str();
}

TEST(ClusterReport, InputsOfDifferentJobsAreSaidToBeSo) {
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(summarize_rank(rank_trace(r == 2 ? 0 : r, 400, 200), {}, "2.1.0"));
  ranks[2].world_size = 8;  // rank 0 again, of an 8-rank job
  ClusterReport rep = build_cluster_report(ranks, "dir");
  ASSERT_EQ(rep.inconsistent.size(), 2u);
  EXPECT_EQ(rep.inconsistent[0], "1 rank number appears in more than one input");
  EXPECT_EQ(rep.inconsistent[1], "the inputs record different world sizes (4, 8)");
  std::ostringstream text;
  render_cluster_text(text, rep, false, false);
  EXPECT_NE(text.str().find("not one job?"), std::string::npos) << text.str();
  ranks.pop_back();
  EXPECT_TRUE(build_cluster_report(ranks, "dir").inconsistent.empty());
}

TEST(ClusterReport, ManyRanksShowTheFirstTheSlowOnesAndTheMedian) {
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 40; ++r)
    ranks.push_back(summarize_rank(r == 29 ? rank_trace(r, 700, 100) : rank_trace(r, 400, 400), {}, "2.1.0"));
  for (RankSummary& s : ranks) s.world_size = 40;
  ClusterReport rep = build_cluster_report(ranks, "dir");
  std::ostringstream text;
  render_cluster_text(text, rep, false, false);
  const std::string out = text.str();
  EXPECT_NE(out.find("\n       0      2 "), std::string::npos) << out;
  EXPECT_NE(out.find("\n      29      2 "), std::string::npos) << out;
  EXPECT_EQ(out.find("\n       1      2 "), std::string::npos) << out;
  EXPECT_NE(out.find("\n  median      2 "), std::string::npos) << out;
  EXPECT_NE(out.find("(2 of 40 ranks shown"), std::string::npos) << out;
  std::ostringstream all;
  render_cluster_text(all, rep, false, true);  // --verbose: every rank
  EXPECT_NE(all.str().find("\n       1      2 "), std::string::npos);
}

TEST(ClusterReport, EqualRanksHaveNoSlowRank) {
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(summarize_rank(rank_trace(r, 400, 200), {}, "2.1.0"));
  EXPECT_TRUE(build_cluster_report(ranks, "dir").slow.empty());
}

TEST(MsprofCluster, EightRankOutputReadsAsACluster) {
  std::string dir = kShared + "/fixtures/ascend/cluster-analysis-output-8rank";
  REQUIRE_FIXTURE(dir);
  EXPECT_TRUE(is_cluster_input(dir));
  std::string out = find_msprof_cluster_output(dir);
  ASSERT_FALSE(out.empty());
  std::vector<RankSummary> ranks = read_msprof_cluster(out);
  ASSERT_EQ(ranks.size(), 8u);  // the "stage" row is not a rank
  EXPECT_EQ(ranks[1].rank, 1);
  EXPECT_EQ(ranks[1].steps.at(0).free_ns, 1488610059);  // 1488610.0587500026 us
  // cluster_communication.json has group (0, 1) only: ranks 0 and 1 get their measured wait.
  EXPECT_EQ(ranks[0].steps.at(0).comm_wait_ns, 115960642 + 27096639);  // its two broadcasts
  EXPECT_EQ(ranks[5].steps.at(0).comm_wait_ns, -1);
  ClusterReport rep = build_cluster_report(ranks, dir);
  ASSERT_FALSE(rep.slow.empty());
  // Rank 1 idles most (1.49 s free vs a median of ~1.11 s) and communicates least: the
  // straggler the others wait for.
  EXPECT_EQ(rep.slow[0].rank, 1);
  EXPECT_EQ(rep.slow[0].dimension, "free");
  bool comm_of_rank5 = false;
  for (const SlowRank& s : rep.slow) {
    EXPECT_NE(s.dimension, "computing") << s.message;  // every rank computes ~80 ms
    if (s.rank == 5 && s.dimension == "communication") {
      comm_of_rank5 = true;
      EXPECT_NE(s.message.find("waits for the slow ranks above"), std::string::npos) << s.message;
    }
  }
  EXPECT_TRUE(comm_of_rank5);
}

// The reader alone (ingest/): the tables as the files hold them, nothing summarised yet.
TEST(MsprofCluster, ReaderKeepsTheFilesRowsPerRank) {
  std::string dir = kShared + "/fixtures/ascend/cluster-analysis-output-8rank";
  REQUIRE_FIXTURE(dir);
  MsprofClusterOutput out = read_msprof_cluster_output(find_msprof_cluster_output(dir));
  ASSERT_EQ(out.rank_steps.size(), 8u);
  ASSERT_EQ(out.rank_steps.at(1).size(), 1u);
  EXPECT_EQ(out.rank_steps.at(1)[0].free_ns, 1488610059);
  EXPECT_FALSE(out.communication.empty());
  int64_t rank0 = 0;
  for (const auto& [key, wait] : out.waits) {
    EXPECT_TRUE(key.first == 0 || key.first == 1) << key.first;  // group (0, 1) only
    if (key.first == 0) rank0 += wait;
  }
  EXPECT_EQ(rank0, 115960642 + 27096639);
  ASSERT_FALSE(out.comm.comm_ops.empty());
  for (const CommOp& op : out.comm.comm_ops) EXPECT_TRUE(op.rank == 0 || op.rank == 1) << op.rank;
}

TEST(MsprofCluster, EightRankSpreadsAreMsprofAnalyzes) {
  std::string dir = kShared + "/fixtures/ascend/cluster-analysis-output-8rank";
  REQUIRE_FIXTURE(dir);
  ClusterReport rep = build_cluster_report(read_msprof_cluster(find_msprof_cluster_output(dir)), dir);
  ASSERT_EQ(rep.spreads.size(), 3u);
  // msprof-analyze 26.2.0's advisor on this table: "the max difference of Communication time has
  // reached 622.989ms", "... of Free time has reached 595.773ms"; Computing not reported.
  const Spread& computing = rep.spreads[0];
  const Spread& comm = rep.spreads[1];
  const Spread& free = rep.spreads[2];
  EXPECT_EQ(computing.dimension, "computing");
  EXPECT_FALSE(computing.above);
  EXPECT_EQ(comm.dimension, "communication not overlapped");
  EXPECT_NEAR(comm.spread_ns / 1e6, 622.989, 0.0005);
  EXPECT_TRUE(comm.above);
  EXPECT_EQ(comm.max_rank, 5);
  EXPECT_EQ(comm.min_rank, 1);
  EXPECT_NEAR(free.spread_ns / 1e6, 595.773, 0.0005);
  EXPECT_TRUE(free.above);
  EXPECT_EQ(free.max_rank, 1);
  EXPECT_EQ(rep.ranks[0].step_source, "cluster_step_trace_time.csv");
  EXPECT_EQ(rep.ranks[0].wait_source, "cluster_communication.json");
  EXPECT_EQ(rep.ranks[5].wait_source, "");
  EXPECT_EQ(rep.ranks[0].stage_ns, 1754645750);
  EXPECT_EQ(rep.ranks[0].bubble_ns, 0);
  // The slow rank names the spread of its dimension.
  EXPECT_NE(rep.slow[0].message.find("free spread across ranks 595.773 ms (rank 1 to rank 5)"), std::string::npos)
      << rep.slow[0].message;
}

// A torch_npu run directory of `rank` holding step_trace_time.csv (two steps), and a
// trace_view.json when `with_trace`.
fs::path step_trace_run(const fs::path& root, int rank, double free_us, bool with_trace) {
  fs::path run = root / fmt::format("node0_{}_20260101_ascend_pt", rank);
  fs::create_directories(run / "ASCEND_PROFILER_OUTPUT");
  std::ofstream(run / fmt::format("profiler_info_{}.json", rank)) << "{}";
  std::ofstream(run / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv")
      << "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble\n"
      << fmt::format("1,800.5,200,50,250,{0},2000.5,1.5\n2,900.5,100,50,150,{0},2000.5,2.5\n", free_us);
  if (with_trace) std::ofstream(run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json") << "[]";
  return run;
}

TEST(StepTraceTime, ARankWithoutTraceViewTakesItsStepTable) {
  fs::path root = test::scratch_path("npud_test_step_trace_time");
  fs::remove_all(root);
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 3; ++r) {
    fs::path run = step_trace_run(root, r, r == 2 ? 900 : 100, false);
    ranks.push_back(summarize_rank(read_trace(run.string(), {}), {}, "2.1.0"));
  }
  const RankSummary& s = ranks[2];
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.step_source, "step_trace_time.csv");
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[1].number, 2);
  EXPECT_EQ(s.steps[1].computing_ns, 900500);
  EXPECT_EQ(s.steps[1].communication_ns, 150000);  // not overlapped + overlapped
  EXPECT_EQ(s.steps[1].overlapped_ns, 50000);
  EXPECT_EQ(s.steps[1].free_ns, 900000);
  EXPECT_EQ(s.steps[1].step_ns, 900500 + 100000 + 900000);  // computing + not overlapped + free
  EXPECT_EQ(s.steps[1].stage_ns, 2000500);
  EXPECT_EQ(s.steps[1].bubble_ns, 2500);
  ClusterReport rep = build_cluster_report(ranks, root.string());
  ASSERT_FALSE(rep.slow.empty());
  EXPECT_EQ(rep.slow[0].rank, 2);
  EXPECT_EQ(rep.slow[0].dimension, "step");
  EXPECT_EQ(rep.spreads[2].spread_ns, 800000);
  EXPECT_EQ(rep.spreads[2].max_rank, 2);
  EXPECT_EQ(rep.spreads[2].max_step, 1);  // the first of equal values
  // The summary keeps the table and where it came from.
  std::stringstream json;
  write_rank_summary(json, s);
  fs::path file = root / "rank2.json";
  std::ofstream(file) << json.str();
  RankSummary back = read_rank_summary(file.string());
  EXPECT_EQ(back.step_source, "step_trace_time.csv");
  EXPECT_EQ(back.steps[1].bubble_ns, 2500);
  // With a trace_view.json the trace's steps are used, as before.
  fs::path traced = step_trace_run(root / "traced", 0, 100, true);
  RankSummary t = summarize_rank(read_trace(traced.string(), {}), {}, "2.1.0");
  EXPECT_EQ(t.step_source, "trace events");
  for (const StepBreakdown& b : t.steps) EXPECT_EQ(b.stage_ns, -1);
  fs::remove_all(root);
}

TEST(MsprofCluster, BadTableNamesFileAndOffset) {
  fs::path dir = test::scratch_path("npud_test_cluster_bad");
  fs::create_directories(dir);
  std::ofstream(dir / "cluster_step_trace_time.csv") << "Step,Type,Index,Computing,Communication,Free\n,rank,0,1.0,2.0,x\n";
  try {
    read_msprof_cluster(dir.string());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(e.file().find("cluster_step_trace_time.csv"), std::string::npos);
    EXPECT_EQ(e.offset(), 61u);  // the x
  }
  fs::remove_all(dir);
}

TEST(ClusterInputs, KinetoRankFilesOfADirectory) {
  std::string dir = kShared + "/fixtures/kineto/multirank-sampled";
  REQUIRE_FIXTURE(dir);
  EXPECT_TRUE(is_cluster_input(dir));
  auto inputs = rank_inputs_in(dir);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_NE(inputs[0].find("sampled_rank-0"), std::string::npos);
  EXPECT_FALSE(is_cluster_input(kShared + "/fixtures/kineto/nccl-comm"));  // one rank: the single-trace report
  EXPECT_FALSE(is_cluster_input(kShared + "/fixtures/ascend/pt-trace-view-1step"));
}

}  // namespace
}  // namespace npud::test
