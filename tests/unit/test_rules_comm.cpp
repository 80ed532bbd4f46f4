// HCCL communication: the readers of communication.json's bandwidth, communication_matrix.json,
// trace_view's HCCL tasks and cluster_communication.json, and rules COMM001-COMM006 with the
// numbers msprof-analyze 26.2.0 reports on the same inputs (docs/communication.md). Rank folders
// are written here, small, with the key names msprof-analyze's readers use.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "cluster/cluster_report.hpp"
#include "cluster/msprof_ranks.hpp"
#include "cluster/rank_summary.hpp"
#include "ingest/reader.hpp"
#include "ingest/communication_ops.hpp"
#include "rules/builtin_rules.hpp"
#include "trace_builder.hpp"
#include "scratch_path.hpp"
#include "require_fixture.hpp"

namespace npud {
namespace {

namespace fs = std::filesystem;
using test::run_rule;

const std::string kShared = NPUD_SHARED_DIR;


void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// One op record of communication.json: start (µs), elapse (ms), SDMA and RDMA (MB, ms).
std::string op_info(double start_us, double elapse_ms, double sdma_mb, double sdma_ms, double rdma_mb, double rdma_ms) {
  auto bw = [](double mb, double ms, std::string dist) {
    return fmt::format(R"J({{"Transit Size(MB)": {}, "Transit Time(ms)": {}, "Bandwidth(GB/s)": {}, "Large Packet Ratio": 0, "Size Distribution": {{{}}}}})J",
                       mb, ms, ms > 0 ? mb / ms : 0, dist);
  };
  return fmt::format(R"J({{"Communication Time Info": {{"Start Timestamp(us)": {:.3f}, "Elapse Time(ms)": {}, "Transit Time(ms)": {}, "Wait Time(ms)": 0.1}},
    "Communication Bandwidth Info": {{"SDMA": {}, "RDMA": {}, "HCCS": {}}}}})J",
                     start_us, elapse_ms, sdma_ms + rdma_ms, bw(sdma_mb, sdma_ms, fmt::format(R"J("2.0": [{}, {}])J", int(sdma_mb / 2), sdma_ms)),
                     bw(rdma_mb, rdma_ms, ""), bw(0, 0, ""));
}

constexpr double kT0 = 1700000000000000;  // µs
const double kSdmaMb[8] = {2, 2, 2, 2, 2, 32, 32, 32};

// A torch_npu rank folder like bench/gen_comm_ranks.py writes: 8 all-reduces 5 ms apart; SDMA
// 2 MB x5 and 32 MB x3, at 8 GB/s on even ops (which overlap a MatMulV2) and 16 GB/s on odd
// ones; RDMA 4 MB at 20 GB/s; HCCL tasks of 1000 B (unaligned), 4096 B, 300 B SDMA over HCCS,
// 1000 B over ON_CHIP and 1000 B RDMA per op.
fs::path write_rank(const fs::path& root, int rank) {
  fs::path d = root / fmt::format("rank{}_ascend_pt", rank) / "ASCEND_PROFILER_OUTPUT";
  std::string ops, events = R"J([{"ph": "M", "name": "process_name", "pid": 800, "tid": 0, "args": {"name": "Ascend Hardware"}},
    {"ph": "M", "name": "process_name", "pid": 900, "tid": 0, "args": {"name": "HCCL"}})J";
  for (int i = 0; i < 8; ++i) {
    double start = kT0 + i * 5000, sdma_ms = kSdmaMb[i] / (i % 2 ? 16.0 : 8.0), rdma_ms = 4 / 20.0;
    double elapse = sdma_ms + rdma_ms + 0.1;
    std::string name = fmt::format("hcom_allReduce__{}_0_1", 100 + i);
    ops += fmt::format(R"J({}"{}@123": {})J", i ? ", " : "", name, op_info(start, elapse, kSdmaMb[i], sdma_ms, 4, rdma_ms));
    events += fmt::format(R"J(, {{"ph": "X", "name": "{}", "pid": 800, "tid": 3, "ts": "{:.3f}", "dur": {}, "args": {{"Task Type": "COMMUNICATION"}}}})J",
                          name, start, elapse * 1000);
    if (i % 2 == 0)
      events += fmt::format(R"J(, {{"ph": "X", "name": "aclnnMatmul_MatMulCommon_MatMulV2", "pid": 800, "tid": 3, "ts": "{:.3f}", "dur": 500, "args": {{"Task Type": "AI_CORE"}}}})J",
                            start + 100);
    events += fmt::format(R"J(, {{"ph": "X", "name": "{}", "pid": 900, "tid": 1, "ts": "{:.3f}", "dur": {}, "args": {{}}}})J", name, start, elapse * 1000);
    const std::tuple<int, const char*, const char*> tasks[] = {
        {1000, "SDMA", "HCCS"}, {4096, "SDMA", "HCCS"}, {300, "SDMA", "HCCS"}, {1000, "SDMA", "ON_CHIP"}, {1000, "RDMA", "ROCE"}};
    int j = 0;
    for (auto [size, transport, link] : tasks) {
      events += fmt::format(R"J(, {{"ph": "X", "name": "{}", "pid": 900, "tid": 2, "ts": "{:.3f}", "dur": 10, "args": {{"transport type": "{}", "link type": "{}", "size(Byte)": {}}}}})J",
                            j % 2 ? "Reduce_Inline" : "Memcpy", start + 10 + j * 20, transport, link, size);
      ++j;
    }
  }
  write(d / "communication.json",
        fmt::format(R"J({{"step1": {{"collective": {{{}, "Total Op Info": {}}}, "p2p": {{}}}}}})J", ops, op_info(0, 99, 999, 99, 99, 9)));
  write(d / "communication_matrix.json",
        fmt::format(R"J({{"step1": {{"collective": {{"hcom_allReduce__100_0_1@123": {{"{}-{}": {{"Transport Type": "HCCS", "Transit Size(MB)": 2, "Transit Time(ms)": 0.25, "Bandwidth(GB/s)": 8}}}},
          "allreduce-top1@123": {{"0-1": {{"Transport Type": "HCCS", "Transit Size(MB)": 2, "Transit Time(ms)": 0.25, "Bandwidth(GB/s)": 8}}}}}}}}}})J",
                    rank, rank + 1));
  write(d / "trace_view.json", events + "]");
  write(d.parent_path() / fmt::format("profiler_info_{}.json", rank), "{}");
  return d.parent_path();
}

struct RankDirs {
  fs::path root = test::scratch_path("npud_test_comm");
  RankDirs() {
    fs::remove_all(root);
    for (int r = 0; r < 2; ++r) write_rank(root, r);
  }
  ~RankDirs() { fs::remove_all(root); }
};

TEST(CommunicationReaders, RankFolderGivesOpsTransportsLinksAndHcclTasks) {
  RankDirs dirs;
  Trace t = read_trace((dirs.root / "rank0_ascend_pt").string(), {});
  ASSERT_EQ(t.comm_ops.size(), 8u);  // "Total Op Info" is not an op
  const CommOp& op = t.comm_ops[5];
  EXPECT_EQ(t.str(op.name), "hcom_allReduce__105_0_1");
  EXPECT_EQ(t.str(op.group), "123");
  EXPECT_EQ(op.step_number, 1);
  EXPECT_EQ(op.start_ns, 25'000'000);  // 5 x 5 ms after the first event, exact to the ns
  const CommTransport* sdma = t.transport(op, "SDMA");
  ASSERT_NE(sdma, nullptr);
  EXPECT_DOUBLE_EQ(sdma->size_mb, 32);
  EXPECT_DOUBLE_EQ(sdma->bandwidth_gbs, 16);
  ASSERT_EQ(t.packet_sizes(*sdma).size(), 1u);
  EXPECT_EQ(t.packet_sizes(*sdma)[0].count, 16);
  ASSERT_EQ(t.comm_links.size(), 1u);  // the "-top1" summary is skipped
  EXPECT_EQ(t.comm_links[0].src, 0);
  EXPECT_EQ(t.comm_links[0].dst, 1);
  EXPECT_EQ(t.str(t.comm_links[0].transport), "HCCS");
  // 8 hcom ops and 5 tasks each, in time order, each task under its op.
  ASSERT_EQ(t.hccl_tasks.size(), 48u);
  EXPECT_EQ(t.hccl_tasks[0].op, kNone);
  EXPECT_EQ(t.hccl_tasks[1].op, 0u);
  EXPECT_EQ(t.hccl_tasks[1].size_bytes, 1000);
  EXPECT_EQ(t.str(t.hccl_tasks[4].link), "ON_CHIP");
  EXPECT_EQ(t.hccl_tasks[7].op, 6u);
}

// The matrix only adds detail: a broken one is a warning naming it and its byte offset.
TEST(CommunicationReaders, BrokenMatrixIsAWarningNotTheEnd) {
  RankDirs dirs;
  fs::path run = dirs.root / "rank0_ascend_pt";
  write(run / "ASCEND_PROFILER_OUTPUT" / "communication_matrix.json", R"J({"step1": [)J");
  Trace t = read_trace(run.string(), {});
  EXPECT_EQ(t.comm_ops.size(), 8u);
  EXPECT_TRUE(t.comm_links.empty());
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].message.find("communication_matrix.json: byte 11"), std::string::npos) << t.warnings[0].message;
}

// msprof-analyze advisor on the same files (docs/communication.md): Packet Analysis counts 9 SDMA
// ops (with "Total Op Info"), 5 small, 1.0 ms; Bandwidth Contention 4 ops (0.55, 0.55, 0.55,
// 4.3 ms at 8 GB/s); Byte Alignment 8 ops of 5096 B, 20 us, 10 us unaligned, 0.2548 GB/s.
TEST(CommRules, OneRankMatchesTheAdvisor) {
  RankDirs dirs;
  Trace t = read_trace((dirs.root / "rank0_ascend_pt").string(), {});

  auto packets = run_rule(comm001_rule(), t);
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(packets[0].metric("sdma_count"), 8);
  EXPECT_EQ(packets[0].metric("sdma_small_count"), 5);
  EXPECT_DOUBLE_EQ(packets[0].metric("sdma_small_ratio"), 0.625);
  EXPECT_DOUBLE_EQ(packets[0].metric("sdma_small_ms"), 1.0);
  EXPECT_EQ(packets[0].metric("rdma_small_count"), 0);
  EXPECT_EQ(packets[0].metric("collective.hcom_allReduce.sdma_small"), 5);
  EXPECT_EQ(packets[0].metric("collective.hcom_allReduce.sdma_count"), 8);
  EXPECT_EQ(packets[0].metric("collective.hcom_allReduce.rdma_count"), 8);

  auto contention = run_rule(comm002_rule(), t);
  ASSERT_EQ(contention.size(), 1u);
  EXPECT_EQ(contention[0].metric("count"), 4);
  EXPECT_DOUBLE_EQ(contention[0].metric("min_bandwidth_gbs"), 8);
  ASSERT_EQ(contention[0].notes.size(), 4u);
  EXPECT_NE(contention[0].notes[3].find("hcom_allReduce__106_0_1: 4.3000 ms, SDMA 8 GB/s"), std::string::npos)
      << contention[0].notes[3];

  auto align = run_rule(comm003_rule(), t);
  ASSERT_EQ(align.size(), 1u);
  EXPECT_EQ(align[0].metric("op_count"), 8);
  EXPECT_EQ(align[0].metric("unaligned_ns"), 8 * 10'000);
  EXPECT_EQ(align[0].metric("checked_ns"), 8 * 20'000);
  EXPECT_EQ(align[0].metric("priority"), 1);  // medium: 50 % of the checked time
  EXPECT_NE(align[0].notes[0].find("5096 bytes in 20.0 us, 10.0 us unaligned (1 tasks), 0.2548 GB/s"), std::string::npos)
      << align[0].notes[0];

  // Odd all-reduces run alone: 4 x (0.425 + 2.3 ms) exposed, plus the even ones' uncovered parts.
  auto exposed = run_rule(comm006_rule(), t);
  ASSERT_EQ(exposed.size(), 1u);
  EXPECT_EQ(exposed[0].metric("worst_step"), -1);  // no kernel_details.csv / ProfilerStep: the whole profile
  EXPECT_EQ(exposed[0].location.op, "hcom_allReduce");
  EXPECT_EQ(exposed[0].metric("exposed_ns"), 9'550'000);

  // Cross-rank rules see nothing in one rank's own records.
  EXPECT_TRUE(run_rule(comm004_rule(), t).empty());
  EXPECT_TRUE(run_rule(comm005_rule(), t).empty());
}

TEST(CommRules, NothingWithoutCommunicationDetail) {
  test::TraceBuilder b;
  b.kernel("ncclKernel_AllReduce", 0, 100, {.kind = TaskKind::Communication});
  Trace t = b.build();
  for (const Rule* r : {&comm001_rule(), &comm002_rule(), &comm003_rule(), &comm004_rule(), &comm005_rule(), &comm006_rule()})
    EXPECT_TRUE(run_rule(*r, t).empty()) << r->id();
}

// Ranks' records: rank 1 moves RDMA at 5 GB/s, rank 0 at 20; one all-gather takes 4.5 s on
// both ranks with a 4.2 s RDMA transfer on rank 1.
Trace two_rank_records(bool retransmission) {
  Trace t;
  auto add = [&](const char* name, int rank, int64_t step, double elapse, double rdma_mb, double rdma_ms) {
    CommOp op;
    op.name = t.intern(name);
    op.group = t.intern("(0, 1)");
    op.rank = rank;
    op.step_number = step;
    op.elapse_ms = elapse;
    op.transports_begin = uint32_t(t.comm_transports.size());
    CommTransport tr;
    tr.type = t.intern("RDMA");
    tr.size_mb = rdma_mb, tr.time_ms = rdma_ms, tr.bandwidth_gbs = rdma_mb / rdma_ms;
    t.comm_transports.push_back(tr);
    op.transports_count = 1;
    t.comm_ops.push_back(op);
  };
  add("hcom_allReduce__1_0", 0, 1, 1, 4, 0.2);
  add("hcom_allReduce__1_0", 1, 1, 1, 4, 0.8);
  if (retransmission) {
    add("hcom_allGather__2_0", 0, 2, 4500, 4, 10);
    add("hcom_allGather__2_0", 1, 2, 4500, 4, 4200);
  }
  return t;
}

TEST(CommRules, SlowLinkNamesTheRankAndStep) {
  auto f = run_rule(comm004_rule(), two_rank_records(false));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].location.op, "RDMA");
  EXPECT_EQ(f[0].metric("slow_rank"), 1);
  EXPECT_EQ(f[0].metric("slow_step"), 1);
  EXPECT_DOUBLE_EQ(f[0].metric("min_gbs"), 5);
  EXPECT_DOUBLE_EQ(f[0].metric("max_gbs"), 20);
  EXPECT_DOUBLE_EQ(f[0].metric("mean_gbs"), 12.5);
  EXPECT_DOUBLE_EQ(f[0].metric("spread_ratio"), 1.2);
}

TEST(CommRules, RetransmissionNeedsEveryRankSlowAndOneRdmaTransferOver4s) {
  auto f = run_rule(comm005_rule(), two_rank_records(true));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].metric("group_count"), 1);
  EXPECT_EQ(f[0].metric("transfer_count"), 1);
  EXPECT_DOUBLE_EQ(f[0].metric("rdma_ms"), 4200);
  EXPECT_NE(f[0].notes[0].find("hcom_allGather__2_0 step 2 rank 1"), std::string::npos) << f[0].notes[0];
  // A rank that arrived late (another rank's elapse under 4 s) is not retransmission.
  Trace t = two_rank_records(true);
  t.comm_ops[2].elapse_ms = 100;
  EXPECT_TRUE(run_rule(comm005_rule(), t).empty());
}

TEST(CommRules, ClusterOfRankFoldersComparesLinks) {
  RankDirs dirs;
  std::vector<RankSummary> ranks;
  for (int r = 0; r < 2; ++r) {
    Trace t = read_trace((dirs.root / fmt::format("rank{}_ascend_pt", r)).string(), {});
    t.set_env("rank", std::to_string(r));
    ranks.push_back(summarize_rank(t, {}, "2.1.0"));
  }
  ASSERT_EQ(ranks[1].comm_ops.size(), 8u);
  ClusterReport rep = build_cluster_report(ranks, dirs.root.string());
  ASSERT_EQ(rep.link_bandwidth.size(), 2u);
  EXPECT_DOUBLE_EQ(rep.link_bandwidth[1].rdma_mb, 32);
  EXPECT_DOUBLE_EQ(rep.link_bandwidth[1].rdma_gbs(), 20);
  EXPECT_DOUBLE_EQ(rep.link_bandwidth[1].sdma_gbs(), 11.7778);  // 106 MB / 9 ms, 4 decimals
  EXPECT_TRUE(rep.links.empty());  // equal ranks: no slow link
}

// The 8-rank fixture's cluster_communication.json: group (0, 1), ranks 0 and 1. msprof-analyze's
// slow link: SDMA avg 2.355, max 2.359, min 2.352 GB/s; RDMA 0: under the 5 % spread, no finding.
TEST(CommRules, EightRankFixtureLinksAreTheAdvisors) {
  std::string dir = kShared + "/fixtures/ascend/cluster-analysis-output-8rank";
  REQUIRE_FIXTURE(dir);
  Trace t;
  read_cluster_comm_ops(dir + "/cluster_analysis_output/cluster_communication.json", t);
  ASSERT_EQ(t.comm_ops.size(), 4u);  // 2 broadcasts x 2 ranks
  ClusterReport rep = build_cluster_report(read_msprof_cluster(find_msprof_cluster_output(dir)), dir);
  ASSERT_EQ(rep.link_bandwidth.size(), 2u);
  EXPECT_DOUBLE_EQ(rep.link_bandwidth[0].sdma_gbs(), 2.3518);
  EXPECT_DOUBLE_EQ(rep.link_bandwidth[1].sdma_gbs(), 2.3586);
  EXPECT_DOUBLE_EQ(rep.link_bandwidth[0].rdma_gbs(), 0);
  EXPECT_TRUE(rep.links.empty());
}

// msprof-analyze 26.2.0 writes "Total Op Info@<hash>" beside the ops of each group and step:
// neither its wait nor its bandwidth counts twice.
TEST(CommunicationReaders, ClusterTotalOpInfoIsNotAnOp) {
  fs::path dir = test::scratch_path("npud_test_comm_cluster") / "cluster_analysis_output";
  fs::remove_all(dir.parent_path());
  write(dir / "cluster_step_trace_time.csv",
        "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free\n"
        "1,rank,0,100,50,0,50,10\n1,rank,1,100,50,0,50,10\n");
  std::string rec = op_info(kT0, 1, 2, 0.25, 4, 0.2);
  write(dir / "cluster_communication.json",
        fmt::format(R"J({{"(0, 1)": {{"step1": {{"hcom_allReduce__1_0@9": {{"0": {0}, "1": {0}}},
                       "Total Op Info@9": {{"0": {0}, "1": {0}}}}}}}}})J", rec));
  std::vector<RankSummary> ranks = read_msprof_cluster(dir.string());
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].steps.at(0).comm_wait_ns, 100'000);  // 0.1 ms, once
  ASSERT_EQ(ranks[0].comm_ops.size(), 1u);
  ClusterReport rep = build_cluster_report(ranks, dir.string());
  ASSERT_EQ(rep.link_bandwidth.size(), 2u);
  EXPECT_DOUBLE_EQ(rep.link_bandwidth[0].rdma_mb, 4);
  fs::remove_all(dir.parent_path());
}

}  // namespace
}  // namespace npud
