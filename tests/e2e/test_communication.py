"""End to end: the HCCL communication rules COMM001-COMM006 (docs/communication.md).

Runs the CLI on rank folders bench/gen_comm_ranks.py writes (the files msprof-analyze 26.2.0 was
run on for the parity table in docs/communication.md) and on the shared 8-rank
cluster_analysis_output fixture (skipped when ../shared is absent). Expected numbers are
msprof-analyze's on the same files.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BINARY = os.environ.get("NPUD_BINARY", "")
SOURCE = os.environ.get("NPUD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
from e2e_support import SHARED
MSPROF = os.path.join(SHARED, "fixtures", "ascend", "cluster-analysis-output-8rank")


def analyze_json(path):
    r = subprocess.run([BINARY, "analyze", path, "-q", "--format", "json"], capture_output=True, text=True, timeout=300)
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip() else None), r.stderr


def by_id(findings):
    return {f["id"]: f for f in findings if f["id"].startswith("COMM")}


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
class GeneratedRanks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="npud_comm_")
        # 4 ranks, rank 3's RDMA at 5 GB/s, rank 2's all-gather RDMA retransmitting in step 2.
        subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "gen_comm_ranks.py"), cls.dir, "4", "3", "2"],
                       check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_one_rank_has_the_advisors_packet_contention_and_alignment_numbers(self):
        code, rep, err = analyze_json(os.path.join(self.dir, "rank0_ascend_pt"))
        self.assertEqual(code, 0, err)  # warnings: under the default --fail-on error
        f = by_id(rep["findings"])
        self.assertEqual(sorted(f), ["COMM001", "COMM002", "COMM003", "COMM006"])
        self.assertEqual(rep["warnings"], [])  # the HCCL process's events are read, not skipped
        # Packet Analysis: the advisor's 5 small of 9 counts "Total Op Info" (docs/communication.md).
        m = f["COMM001"]["metrics"]
        self.assertEqual((m["sdma_count"], m["sdma_small_count"], m["sdma_small_ms"]), (9, 6, 2.0))
        # Bandwidth Contention: 4 ops at 8 GB/s, 0.55/0.55/0.55/4.3 ms (step 2's all-gather overlaps no matmul).
        self.assertEqual(f["COMM002"]["metrics"]["count"], 4)
        self.assertIn("hcom_allReduce__106_0_1: 4.3000 ms, SDMA 8 GB/s", "\n".join(f["COMM002"]["notes"]))
        # Byte Alignment: 8 ops of 5096 B, 20 us, 10 us unaligned, 0.2548 GB/s.
        self.assertEqual(f["COMM003"]["metrics"]["op_count"], 8)
        self.assertIn("5096 bytes in 20.0 us, 10.0 us unaligned (1 tasks), 0.2548 GB/s", f["COMM003"]["notes"][0])
        # step_trace_time's Communication(Not Overlapped) of rank 0: 9.55 ms.
        self.assertEqual(f["COMM006"]["metrics"]["worst_step_exposed_ns"], 9550000)

    def test_the_cluster_names_the_slow_link_and_the_retransmission(self):
        code, rep, err = analyze_json(self.dir)
        self.assertEqual(code, 0, err)  # warnings: under the default --fail-on error
        links = {(b["step"], b["rank"]): b for b in rep["link_bandwidth"]}
        self.assertEqual(len(links), 8)
        self.assertEqual(links[(1, 3)]["rdma_gbs"], 5)
        self.assertEqual(links[(1, 0)]["sdma_gbs"], 11.7778)
        f = {}
        for x in rep["link_findings"]:
            f.setdefault(x["id"], []).append(x)
        rdma = [x for x in f["COMM004"] if x["location"]["op"] == "RDMA"][0]["metrics"]
        # The advisor's slow link: RDMA avg 8.275, max 20.0, min 0.001 (rank 2, step 2).
        self.assertEqual((rdma["slow_rank"], rdma["slow_step"]), (2, 2))
        self.assertAlmostEqual(rdma["mean_gbs"], 8.275, places=3)
        self.assertEqual((rdma["min_gbs"], rdma["max_gbs"]), (0.001, 20))
        sdma = [x for x in f["COMM004"] if x["location"]["op"] == "SDMA"][0]["metrics"]
        self.assertAlmostEqual(sdma["mean_gbs"], 9.889, places=3)
        # Retransmission: group (0,1,2,3)... here the rank folders' group hash; rank 2, 4200 ms.
        self.assertEqual(f["COMM005"][0]["metrics"]["transfer_count"], 1)
        self.assertIn("step 2 rank 2: RDMA 4.0000 MB in 4200.0000 ms", f["COMM005"][0]["notes"][0])
        # Text report: the link table.
        r = subprocess.run([BINARY, "analyze", self.dir, "-q"], capture_output=True, text=True, timeout=300)
        self.assertIn("communication links across ranks", r.stdout)
        self.assertIn("slow RDMA link: rank 2 step 2", r.stdout)
        # HTML report: the same table.
        html = os.path.join(self.dir, "cluster.html")
        r = subprocess.run([BINARY, "analyze", self.dir, "-q", "--format", "html", "-o", html], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(html, encoding="utf-8") as f:
            page = f.read()
        self.assertIn('id="link-bandwidth"', page)
        self.assertIn("slow RDMA link: rank 2 step 2", page)


    def test_select_and_ignore_reach_the_link_rules(self):
        # Issue 43: the cluster view ran COMM004/COMM005 itself, past --select/--ignore.
        def ids(*args):
            r = subprocess.run([BINARY, "analyze", self.dir, "-q", "--format", "json", *args], capture_output=True,
                               text=True, timeout=300)
            rep = json.loads(r.stdout)
            return {f["id"] for f in rep["link_findings"]}, r
        self.assertEqual(ids()[0], {"COMM004", "COMM005"})
        self.assertEqual(ids("--ignore", "COMM004,COMM005")[0], set())
        self.assertEqual(ids("--ignore", "COMM005")[0], {"COMM004"})
        self.assertEqual(ids("--select", "SYNC")[0], set())
        def run(fmt):
            return subprocess.run([BINARY, "analyze", self.dir, "-q", "--format", fmt, "--ignore", "COMM004,COMM005"],
                                  capture_output=True, text=True, timeout=300).stdout
        results = json.loads(run("sarif"))["runs"][0]["results"]
        self.assertFalse({r["ruleId"] for r in results} & {"COMM004", "COMM005"})
        text = run("text")   # the links' bandwidth table stays (numbers, not findings)
        self.assertNotIn("slow RDMA link", text)
        self.assertNotIn("retransmi", text)

    def test_step_trace_time_alone_gives_the_exposed_communication(self):
        # No trace_view.json / kernel_details.csv: step_trace_time.csv's Communication(Not Overlapped)
        # (rank 3: 14.2 ms, what msprof-analyze's cluster_step_trace_time.csv says) and
        # communication.json's collectives of the step.
        run = os.path.join(tempfile.mkdtemp(prefix="npud_comm_stepped_"), "rank3_ascend_pt")
        self.addCleanup(shutil.rmtree, os.path.dirname(run))
        shutil.copytree(os.path.join(self.dir, "rank3_ascend_pt"), run)
        for name in ("trace_view.json", "kernel_details.csv"):
            os.remove(os.path.join(run, "ASCEND_PROFILER_OUTPUT", name))
        code, rep, err = analyze_json(run)
        self.assertEqual(code, 0, err)
        f = by_id(rep["findings"])["COMM006"]
        self.assertEqual((f["metrics"]["worst_step"], f["metrics"]["worst_step_exposed_ns"]), (1, 14200000))
        self.assertEqual(f["location"]["op"], "hcom_allReduce")

    def test_merged_summaries_give_the_same_links(self):
        out = tempfile.mkdtemp(prefix="npud_comm_summaries_")  # beside, not inside, the ranks' folder
        self.addCleanup(shutil.rmtree, out)
        for r in range(4):
            subprocess.run([BINARY, "analyze", os.path.join(self.dir, f"rank{r}_ascend_pt"), "-q", "--format", "summary",
                            "-o", os.path.join(out, f"rank{r}.json")], check=True, capture_output=True, timeout=300)
        r = subprocess.run([BINARY, "merge", *sorted(os.path.join(out, f) for f in os.listdir(out)), "--format", "json"],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        merged = json.loads(r.stdout)
        _, direct, _ = analyze_json(self.dir)
        self.assertEqual(merged["link_bandwidth"], direct["link_bandwidth"])
        self.assertEqual([f["message"] for f in merged["link_findings"]], [f["message"] for f in direct["link_findings"]])


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
@unittest.skipUnless(os.path.isdir(MSPROF), "shared fixtures not found (NPUD_SHARED_DIR)")
class EightRankFixture(unittest.TestCase):
    def test_link_bandwidth_is_the_advisors_and_below_the_slow_link_threshold(self):
        code, rep, err = analyze_json(MSPROF)
        self.assertIn(code, (0, 1), err)
        bw = [(b["rank"], b["sdma_gbs"], b["rdma_gbs"]) for b in rep["link_bandwidth"]]
        # msprof-analyze: SDMA avg 2.355, max 2.359, min 2.352; RDMA 0.
        self.assertEqual(bw, [(0, 2.3518, 0), (1, 2.3586, 0)])
        self.assertEqual(rep["link_findings"], [])


if __name__ == "__main__":
    unittest.main()
