"""End to end: the cluster view (`analyze DIR`, `analyze --format summary`, `merge`).

On the real multi-rank fixtures (../shared, skipped when absent) and on rank files that
bench/gen_cluster.py writes with a planted slow rank.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BINARY = os.environ.get("NPUD_BINARY", "")
SOURCE = os.environ.get("NPUD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("NPUD_SHARED_DIR", "")
FIXTURES = os.path.join(SHARED, "fixtures")
HAVE_FIXTURES = os.path.isdir(os.path.join(FIXTURES, "kineto"))
MULTIRANK = os.path.join(FIXTURES, "kineto", "multirank-sampled")
MSPROF = os.path.join(FIXTURES, "ascend", "cluster-analysis-output-8rank")


def npud(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=300)


def cluster_json(*args):
    r = npud(*args, "--format", "json")
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip() else None), r.stderr


def without_source(report):
    report = dict(report)
    report.pop("source")
    report["ranks"] = [{k: v for k, v in row.items() if k != "source"} for row in report["ranks"]]
    return report


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
class GeneratedCluster(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="npud_cluster_")
        subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "gen_cluster.py"), cls.dir, "6", "1", "4"],
                       check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_the_planted_slow_rank_is_found_with_the_step_and_the_others_wait(self):
        code, rep, err = cluster_json("analyze", self.dir, "-q")
        self.assertEqual(code, 0, err)
        self.assertEqual([r["rank"] for r in rep["ranks"]], list(range(6)))
        self.assertEqual(rep["wait_basis"], "estimated from collectives")
        slow = rep["slow_ranks"]
        self.assertEqual([(s["rank"], s["dimension"]) for s in slow], [(4, "computing")])
        self.assertGreater(slow[0]["share_of_step"], 0.05)
        self.assertGreaterEqual(slow[0]["worst_step"], 1)
        waits = {r["rank"]: r["comm_wait_ns"] for r in rep["ranks"]}
        self.assertLess(waits[4], 1000)  # the straggler never waits
        self.assertGreater(min(w for k, w in waits.items() if k != 4), 100000)

    def test_one_worker_and_several_give_the_same_report(self):
        one = cluster_json("analyze", self.dir, "-q", "-j", "1")[1]
        three = cluster_json("analyze", self.dir, "-q", "-j", "3")[1]
        self.assertEqual(one, three)

    def test_summaries_written_per_rank_and_merged_give_the_same_report(self):
        out = tempfile.mkdtemp(prefix="npud_summaries_")
        try:
            for path in sorted(glob.glob(os.path.join(self.dir, "rank-*.json"))):
                name = os.path.basename(path)
                r = npud("analyze", path, "-q", "--format", "summary", "-o", os.path.join(out, name))
                self.assertEqual(r.returncode, 0, r.stderr)
            merged = cluster_json("merge", out)[1]
            direct = cluster_json("analyze", self.dir, "-q")[1]
            self.assertEqual(without_source(merged), without_source(direct))
        finally:
            shutil.rmtree(out)

    def test_a_directory_mixing_profiles_and_summaries(self):
        mixed = tempfile.mkdtemp(prefix="npud_cluster_mixed_")
        try:
            ranks = sorted(glob.glob(os.path.join(self.dir, "rank-*.json")))
            for path in ranks[:3]:
                shutil.copy(path, mixed)
            for path in ranks[3:]:
                r = npud("analyze", path, "-q", "--format", "summary", "-o",
                         os.path.join(mixed, os.path.basename(path).replace(".json", ".summary.json")))
                self.assertEqual(r.returncode, 0, r.stderr)
            code, rep, err = cluster_json("analyze", mixed, "-q")
            self.assertEqual(code, 0, err)
            self.assertEqual(without_source(rep), without_source(cluster_json("analyze", self.dir, "-q")[1]))
        finally:
            shutil.rmtree(mixed)

    def test_an_unreadable_rank_is_named_and_the_rest_reported(self):
        bad_dir = tempfile.mkdtemp(prefix="npud_cluster_bad_")
        try:
            for path in glob.glob(os.path.join(self.dir, "rank-*.json"))[:3]:
                shutil.copy(path, bad_dir)
            with open(os.path.join(bad_dir, "rank-9.json"), "w") as f:
                f.write('{"traceEvents": [{"ph": "X", "name": ')
            code, rep, err = cluster_json("analyze", bad_dir, "-q")
            self.assertEqual(code, 2)
            self.assertIn("rank-9.json: byte", err)
            self.assertEqual(len(rep["ranks"]), 3)
            self.assertTrue(any("could not be read" in n for n in rep["notes"]))
        finally:
            shutil.rmtree(bad_dir)

    def test_formats_a_cluster_cannot_have_are_refused(self):
        r = npud("analyze", self.dir, "-q", "--format", "sarif")
        self.assertEqual(r.returncode, 2)
        self.assertIn("not available for a cluster", r.stderr)

    def test_html_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "cluster.html")
            r = npud("analyze", self.dir, "-q", "--format", "html", "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, encoding="utf-8") as f:
                page = f.read()
        self.assertIn('<svg id="rank-chart"', page)
        self.assertEqual(page.count(">rank "), 6)  # one bar label per rank
        self.assertIn('style="font-weight:bold;fill:#b3261e">rank 4<', page)  # the planted slow rank
        self.assertIn("rank 4 computes", page)
        self.assertIn('<table id="rank-table">', page)

    def test_merge_of_something_else_says_what_it_is_not(self):
        path = sorted(glob.glob(os.path.join(self.dir, "rank-*.json")))[0]
        r = npud("merge", path)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a rank summary", r.stderr)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
@unittest.skipUnless(HAVE_FIXTURES, "../shared/fixtures not found beside the checkout: real-trace tests skipped")
class RealClusters(unittest.TestCase):
    def test_two_kineto_ranks_of_a_128_rank_job(self):
        code, rep, err = cluster_json("analyze", MULTIRANK, "-q", "--fail-on", "never")
        self.assertEqual(code, 0, err)
        self.assertEqual([r["rank"] for r in rep["ranks"]], [0, 1])
        self.assertEqual(rep["world_size"], 128)
        self.assertEqual(rep["missing_rank_count"], 126)
        self.assertEqual(rep["wait_basis"], "estimated from collectives")
        # Rank 1 computes ~34 ms more per step (140 vs 106 ms of kernels); rank 0 waits longer.
        self.assertEqual([(s["rank"], s["dimension"]) for s in rep["slow_ranks"]], [(1, "computing")])
        waits = {r["rank"]: r["comm_wait_ns"] for r in rep["ranks"]}
        self.assertGreater(waits[0], waits[1])
        text = npud("analyze", MULTIRANK, "-q").stdout
        self.assertIn("cluster: 2 ranks of world size 128", text)
        self.assertIn("rank 1 computes", text)

    def test_torch_npu_run_directories_one_per_rank(self):
        root = tempfile.mkdtemp(prefix="npud_ascend_cluster_")
        try:
            trace_view = os.path.join(FIXTURES, "ascend", "pt-trace-view-1step", "trace_view.json")
            for rank in (0, 1):
                run = os.path.join(root, "node%d_1234_20260101_ascend_pt" % rank)
                os.makedirs(os.path.join(run, "ASCEND_PROFILER_OUTPUT"))
                shutil.copy(trace_view, os.path.join(run, "ASCEND_PROFILER_OUTPUT"))
                with open(os.path.join(run, "profiler_info_%d.json" % rank), "w") as f:
                    f.write("{}")
                # msprof's per-rank communication.json: rank 0 waited 50 ms in step 1, rank 1 5 ms
                # (its step key without a number: the profile's one step).
                info = lambda wait: {"Communication Time Info": {"Elapse Time(ms)": wait + 2.0, "Transit Time(ms)": 2.0,
                                                                 "Wait Time(ms)": wait}}
                comm = {("step1" if rank == 0 else "step"): {
                    "collective": {"hcom_allReduce__1_0@123": info(30.0 if rank == 0 else 3.0),
                                   "Total Op Info": info(999.0)},
                    "p2p": {"hcom_send__1_1@456": info(20.0 if rank == 0 else 2.0)}}}
                with open(os.path.join(run, "ASCEND_PROFILER_OUTPUT", "communication.json"), "w") as f:
                    json.dump(comm, f)
            code, rep, err = cluster_json("analyze", root, "-q", "--fail-on", "never")
            self.assertEqual(code, 0, err)
            self.assertEqual([r["rank"] for r in rep["ranks"]], [0, 1])
            self.assertEqual(rep["wait_basis"], "measured")
            self.assertEqual([r["comm_wait_ns"] for r in rep["ranks"]], [50000000, 5000000])
            self.assertEqual([(s["rank"], s["dimension"]) for s in rep["slow_ranks"]], [(0, "wait")])  # rank 0 waits 45 ms more
            self.assertGreater(len(rep["common_findings"]), 0)
            self.assertEqual(rep["partial_findings"], [])
        finally:
            shutil.rmtree(root)

    def test_msprof_analyze_cluster_output(self):
        code, rep, err = cluster_json("analyze", MSPROF, "-q")
        self.assertEqual(code, 0, err)
        self.assertEqual(len(rep["ranks"]), 8)
        self.assertEqual((rep["slow_ranks"][0]["rank"], rep["slow_ranks"][0]["dimension"]), (1, "free"))
        self.assertEqual(rep["ranks"][0]["comm_wait_ns"], 143057281)  # two broadcasts of group (0, 1)
        # merge reads the same directory the same way.
        self.assertEqual(cluster_json("merge", MSPROF)[1]["slow_ranks"], rep["slow_ranks"])


if __name__ == "__main__":
    unittest.main()
