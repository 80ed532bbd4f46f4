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
from e2e_support import SHARED, assert_valid_sarif
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
            self.assertEqual(npud("merge", out, "--format", "sarif").stdout,
                             npud("analyze", self.dir, "-q", "--format", "sarif").stdout)
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

    def test_a_cluster_summarised_is_a_merged_summary_that_merge_reads_back(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "part.json")
            r = npud("analyze", self.dir, "-q", "--format", "summary", "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                self.assertEqual(json.load(f)["kind"], "npu-doctor-merged-summary")
            self.assertEqual(without_source(cluster_json("merge", out)[1]),
                             without_source(cluster_json("analyze", self.dir, "-q")[1]))

    def test_a_baseline_of_a_cluster_is_refused_not_ignored(self):
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "baseline.json")
            for option in ("--baseline", "--write-baseline"):
                r = npud("analyze", self.dir, "-q", option, base)
                self.assertEqual(r.returncode, 2, option)
                self.assertIn("%s takes one trace or capture" % option, r.stderr)
            self.assertFalse(os.path.exists(base))

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


def kineto_rank(path, rank, world_size, steps=3, stepped=True, op="aten::bmm", dur_us=25):
    """A small Kineto rank trace: per step an op, its launch, its kernel and an all-gather."""
    pid = 300 + rank
    events, t = [], 5000
    for step in range(steps):
        start = t
        for i in range(2):
            ext = step * 10 + i
            events += [
                {"ph": "X", "cat": "cpu_op", "name": op, "pid": pid, "tid": pid, "ts": t, "dur": 15,
                 "args": {"External id": ext}},
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": pid, "ts": t + 3,
                 "dur": 4, "args": {"External id": ext, "correlation": ext}},
                {"ph": "X", "cat": "kernel", "name": "bmm_kernel", "pid": 0, "tid": 7, "ts": t + 8, "dur": dur_us,
                 "args": {"External id": ext, "correlation": ext, "device": rank, "stream": 7}}]
            t += dur_us + 12
        events.append({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllGather_RING_LL", "pid": 0, "tid": 9, "ts": t,
                       "dur": 70, "args": {"device": rank, "stream": 9, "correlation": 5000 + step}})
        t += 90
        if stepped:
            events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (step + 4), "pid": pid,
                           "tid": pid, "ts": start, "dur": t - start})
        t += 10
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "distributedInfo": {"backend": "hccl", "rank": rank, "world_size": world_size},
                   "traceEvents": events}, f)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
class OddRanks(unittest.TestCase):
    """Variants of the round-3 cluster repros: each input built here, in a temp dir."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="npud_odd_ranks_")

    def tearDown(self):
        for root, dirs, _ in os.walk(self.dir):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(self.dir)

    def test_a_huge_world_size_neither_hangs_analyze_nor_merge(self):
        for r in range(3):
            kineto_rank(os.path.join(self.dir, "job-rank%d.json" % r), r, 3 if r != 2 else 1 << 60)
        r = subprocess.run([BINARY, "analyze", self.dir, "-q", "--format", "json"], capture_output=True, text=True,
                           timeout=60)  # a guard, not a timing: before, this looped over 2^60 ranks
        rep = json.loads(r.stdout)
        self.assertEqual(rep["world_size"], 3)
        self.assertEqual(rep["missing_rank_count"], 0)
        self.assertTrue(any("job-rank2.json records a world size of 1152921504606846976" in w for w in rep["warnings"]),
                        rep["warnings"])
        summaries = os.path.join(self.dir, "summaries")
        os.mkdir(summaries)
        for r in range(3):
            out = npud("analyze", os.path.join(self.dir, "job-rank%d.json" % r), "-q", "--format", "summary", "-o",
                       os.path.join(summaries, "s%d.json" % r))
            self.assertEqual(out.returncode, 0, out.stderr)
        merged = subprocess.run([BINARY, "merge", summaries], capture_output=True, text=True, timeout=60)
        self.assertIn("warning", merged.stdout)
        # The warning names the file the value was recorded in (a summary keeps its trace's name).
        self.assertIn("job-rank2.json records a world size", merged.stdout.split("per rank")[0])

    def test_a_rank_past_its_world_size_is_not_one_job(self):
        kineto_rank(os.path.join(self.dir, "a.json"), 0, 2)
        kineto_rank(os.path.join(self.dir, "b.json"), 1 << 45, 2)
        code, rep, err = cluster_json("analyze", self.dir, "-q")
        self.assertTrue(any("b.json says it is rank 35184372088832 of a world of 2 ranks" in w
                            for w in rep["inconsistent"]), rep["inconsistent"])

    def test_empty_ranks_are_named_and_do_not_make_the_others_slow(self):
        for r in range(3):
            kineto_rank(os.path.join(self.dir, "rank_%d.json" % r), r, 6)
        empties = {"rank_3.json": {"traceEvents": [], "distributedInfo": {"rank": 3, "world_size": 6}},
                   "rank_4.json": [],
                   "rank_5.json": {"schemaVersion": 1, "distributedInfo": {"rank": 5, "world_size": 6},
                                   "deviceProperties": [{"id": 5}],
                                   "traceEvents": [{"ph": "M", "name": "process_name", "pid": 305,
                                                    "args": {"name": "python3"}}]}}
        for name, doc in empties.items():
            with open(os.path.join(self.dir, name), "w") as f:
                json.dump(doc, f)
        code, rep, err = cluster_json("analyze", self.dir, "-q")
        self.assertEqual(code, 0, err)
        self.assertEqual(rep["slow_ranks"], [])
        self.assertEqual(len(rep["ranks"]), 6)
        for name in empties:
            self.assertTrue(any(name in n and "no events" in n for n in rep["notes"]), (name, rep["notes"]))
        left_out = [row for row in rep["ranks"] if row["step_ns"] is None]
        self.assertEqual(len(left_out), 3)

    def test_a_rank_without_step_markers_is_not_compared_per_step(self):
        for r in range(4):
            kineto_rank(os.path.join(self.dir, "w%d.json" % r), r, 4, steps=4, stepped=(r != 1))
        code, rep, err = cluster_json("analyze", self.dir, "-q")
        self.assertEqual(code, 0, err)
        self.assertEqual(rep["slow_ranks"], [])
        self.assertTrue(any("rank 1" in n and "no ProfilerStep markers" in n for n in rep["notes"]), rep["notes"])

    def test_control_characters_in_names_reach_no_terminal(self):
        evil = "aten::mul\x1b[2J\x1b[H\x1b[32mno problems\x1b[0m\r\x9b5n"
        kineto_rank(os.path.join(self.dir, "r0.json"), 0, 2)
        kineto_rank(os.path.join(self.dir, "r1\x1b[7m.json"), 1, 2, op=evil)
        r = npud("analyze", self.dir, "-q", "-v", "--fail-on", "never")
        self.assertEqual(r.returncode, 0, r.stderr)
        for out in (r.stdout, r.stderr):
            self.assertNotIn("\x1b", out)
            self.assertNotIn("\r", out)
            self.assertNotIn("\x9b", out)
        summaries = os.path.join(self.dir, "s")
        os.mkdir(summaries)
        for name in os.listdir(self.dir):
            if name.endswith(".json"):
                npud("analyze", os.path.join(self.dir, name), "-q", "--format", "summary", "-o",
                     os.path.join(summaries, name))
        m = npud("merge", summaries, "-v", "--fail-on", "never")
        self.assertEqual(m.returncode, 0, m.stderr)
        self.assertNotIn("\x1b", m.stdout + m.stderr)
        self.assertIn("aten::mul\\x1b[2J\\x1b[H", m.stdout)  # shown escaped, as the single-trace report does

    def test_a_directory_named_like_a_rank_file_is_named(self):
        for r in range(2):
            kineto_rank(os.path.join(self.dir, "trace-%d.json" % r), r, 3)
        os.mkdir(os.path.join(self.dir, "trace-2.json"))
        code, rep, err = cluster_json("analyze", self.dir, "-q")
        self.assertEqual(code, 0, err)
        self.assertTrue(any("trace-2.json is a directory" in n for n in rep["notes"]), rep["notes"])
        self.assertEqual(rep["missing_ranks"], [2])

    @unittest.skipIf(os.geteuid() == 0, "root reads any folder")
    def test_an_unreadable_folder_inside_a_rank_is_named_and_the_ranks_reported(self):
        header = ("Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),"
                  "Duration(us),Wait Time(us),Block Dim\n")
        for r in range(3):
            out = os.path.join(self.dir, "node%d_77_20260301_ascend_pt" % r, "ASCEND_PROFILER_OUTPUT")
            os.makedirs(out)
            with open(os.path.join(out, "kernel_details.csv"), "w") as f:
                f.write(header + "2,%d,0,1,3,BatchMatMul,BatchMatMul,AI_CORE,2000.0,14.0,0,16\n" % r)
        locked = os.path.join(self.dir, "node2_77_20260301_ascend_pt", "PROF_000009_locked")
        os.makedirs(os.path.join(locked, "device_2"))
        os.chmod(locked, 0)
        r = subprocess.run([BINARY, "analyze", self.dir, "-q", "--format", "json"], capture_output=True, text=True,
                           timeout=120)
        self.assertIn(r.returncode, (0, 1), r.stderr)  # not an abort (134)
        rep = json.loads(r.stdout)
        self.assertEqual(len(rep["ranks"]), 3)
        self.assertTrue(any("PROF_000009_locked could not be listed" in n for n in rep["notes"]), rep["notes"])


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
class MapAndReduce(unittest.TestCase):
    """Issue 46: the per-rank map (`analyze RANK --format summary`) and the reduce (`merge`) as a
    launcher runs them: gzipped summaries, paths from a list file or stdin, a rank whose map step
    failed, and ranks that never wrote a summary."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="npud_map_reduce_")
        for r in range(4):
            trace = os.path.join(self.dir, "t%d.json" % r)
            kineto_rank(trace, r, 5)
            if r == 2:   # this rank's profile was cut short: its map step fails
                with open(trace, "r+") as f:
                    f.truncate(300)
            code = subprocess.run([BINARY, "analyze", "-q", trace, "--format", "summary", "-o",
                                   os.path.join(self.dir, "rank-%d.json" % r)], capture_output=True, timeout=120)
            self.assertEqual(code.returncode, 2 if r == 2 else 0)
        subprocess.run(["gzip", os.path.join(self.dir, "rank-1.json")], check=True)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_a_failed_map_step_and_a_missing_rank_are_named_and_fail_the_merge(self):
        with open(os.path.join(self.dir, "rank-2.json")) as f:
            record = json.load(f)
        self.assertEqual((record["rank"], record["kind"]), (2, "npu-doctor-rank-summary"))
        self.assertIn("t2.json: byte", record["failed"])
        paths = "\n".join(os.path.join(self.dir, "rank-%s" % n) for n in ("0.json", "1.json.gz", "2.json", "3.json"))
        with open(os.path.join(self.dir, "list.txt"), "w") as f:
            f.write(paths + "\n\n")
        for args, stdin in ((["--from", os.path.join(self.dir, "list.txt")], None), (["--from", "-"], paths),
                            ([self.dir], None)):
            with self.subTest(args=args):
                r = subprocess.run([BINARY, "merge", *args, "--expect-ranks", "5", "--format", "json"], input=stdin,
                                   capture_output=True, text=True, timeout=120)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("rank 2 (", r.stderr)
                self.assertIn("its summary run failed", r.stderr)
                self.assertIn("--expect-ranks 5: no summary for 1 rank (4)", r.stderr)   # 2 failed: said above
                report = json.loads(r.stdout)
                self.assertEqual(sorted(row["rank"] for row in report["ranks"]), [0, 1, 3])   # rank 1 read gzipped
                self.assertTrue(any(n.startswith("rank 2 (") and "its summary run failed" in n for n in report["notes"]),
                                report["notes"])

    def test_a_failed_rank_is_carried_through_a_merge_in_levels(self):
        part = os.path.join(self.dir, "part-a.json")
        r = subprocess.run([BINARY, "merge", *(os.path.join(self.dir, "rank-%s" % n) for n in ("0.json", "2.json")),
                            "--format", "summary", "-o", part], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 2, r.stderr)   # this level already says a rank failed
        with open(part) as f:
            failed = [row for row in json.load(f)["ranks"] if "failed" in row]
        self.assertEqual([row["rank"] for row in failed], [2])
        r = subprocess.run([BINARY, "merge", part, os.path.join(self.dir, "rank-1.json.gz"),
                            os.path.join(self.dir, "rank-3.json"), "--format", "json"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("rank 2 (", r.stderr)
        report = json.loads(r.stdout)
        self.assertEqual([row["rank"] for row in report["ranks"]], [0, 1, 3])
        self.assertTrue(any("its summary run failed" in n for n in report["notes"]), report["notes"])


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
class MergeInLevels(unittest.TestCase):
    """Issue 46: merges compose. Rank summaries merged in parts (`merge --format summary`), the parts
    merged again, give the flat merge's report: slow ranks, median step, waits, findings, SARIF."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="npud_levels_")
        cls.ranks = os.path.join(cls.dir, "ranks")
        cls.summaries = os.path.join(cls.dir, "summaries")
        os.makedirs(cls.summaries)
        subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "gen_cluster.py"), cls.ranks, "8", "1", "5"],
                       check=True, capture_output=True)
        for path in sorted(glob.glob(os.path.join(cls.ranks, "rank-*.json"))):
            r = npud("analyze", path, "-q", "--format", "summary", "-o", os.path.join(cls.summaries, os.path.basename(path)))
            assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def part(self, name, ranks, *extra):
        out = os.path.join(self.dir, name)
        r = npud("merge", *extra, *(os.path.join(self.summaries, "rank-%d.json" % k) for k in ranks),
                 "--format", "summary", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        return out

    def test_two_halves_merged_then_merged_give_the_flat_merge(self):
        a = self.part("half-a.json", range(0, 4))
        b = self.part("half-b.json", range(4, 8))
        subprocess.run(["gzip", "-kf", b], check=True)   # a part may travel gzipped
        flat = cluster_json("merge", self.summaries)[1]
        levels = cluster_json("merge", a, b + ".gz")[1]
        self.assertEqual([(s["rank"], s["dimension"]) for s in flat["slow_ranks"]], [(5, "computing")])
        self.assertEqual(without_source(levels), without_source(flat))
        self.assertEqual(npud("merge", a, b, "--format", "sarif").stdout, npud("merge", self.summaries, "--format", "sarif").stdout)

    def test_three_levels_and_uneven_parts_give_the_flat_merge(self):
        a = self.part("lvl-a.json", [0, 1, 2])
        b = self.part("lvl-b.json", [3])
        ab = os.path.join(self.dir, "lvl-ab.json")
        r = npud("merge", a, b, "--format", "summary", "-o", ab)
        self.assertEqual(r.returncode, 0, r.stderr)
        rest = [os.path.join(self.summaries, "rank-%d.json" % k) for k in range(4, 8)]
        levels = cluster_json("merge", ab, *rest)[1]
        self.assertEqual(without_source(levels), without_source(cluster_json("merge", self.summaries)[1]))

    def test_a_merged_summary_is_smaller_than_its_parts(self):
        a = self.part("size-a.json", range(8))
        parts = sum(os.path.getsize(p) for p in glob.glob(os.path.join(self.summaries, "rank-*.json")))
        self.assertLess(os.path.getsize(a), parts / 2)   # collectives as patterns, shared findings once


def grouped_rank(path, rank, world_size, group, allreduce_us, steps=3, record_groups=True):
    """A Kineto rank trace as torch >= 2.2 writes one: per step 10 ms of compute, then six all-reduces
    whose kernels carry their process group (`Process Group Name` / `Process Group Ranks`)."""
    pid = 400 + rank
    events, t = [], 1000
    for step in range(steps):
        start = t
        events.append({"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": t, "dur": 10000,
                       "args": {"device": rank, "stream": 7, "correlation": step * 100}})
        t += 10000
        for i in range(6):
            args = {"device": rank, "stream": 9, "correlation": step * 100 + 1 + i, "Collective name": "allreduce"}
            if record_groups:
                args.update({"Process Group Name": group[0], "Process Group Ranks": str(group[1]),
                             "Process Group Description": "undefined"})
            events.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0,
                           "tid": 9, "ts": t, "dur": allreduce_us, "args": args})
            t += allreduce_us
        events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": pid, "tid": pid,
                       "ts": start, "dur": t - start})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world_size},
                   "traceEvents": events}, f)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
class ProcessGroups(unittest.TestCase):
    """Issue 46: collectives are matched, and ranks judged, within their process groups. Two groups
    (1 ms all-reduces on ranks 0-1, 5 ms on ranks 2-3) that never wait for each other."""

    def write(self, record_groups):
        d = tempfile.mkdtemp(prefix="npud_groups_")
        self.addCleanup(shutil.rmtree, d)
        for rank in range(4):
            group = ("1", [0, 1]) if rank < 2 else ("2", [2, 3])
            grouped_rank(os.path.join(d, "rank-%d.json" % rank), rank, 4, group, 1000 if rank < 2 else 5000,
                         record_groups=record_groups)
        return d

    def test_two_groups_nobody_waits_and_no_rank_is_slow(self):
        code, rep, err = cluster_json("analyze", self.write(True), "-q")
        self.assertEqual(code, 0, err)
        self.assertEqual(rep["wait_basis"], "estimated from collectives")
        self.assertEqual({r["rank"]: r["comm_wait_ns"] for r in rep["ranks"]}, {0: 0, 1: 0, 2: 0, 3: 0})
        self.assertEqual(rep["slow_ranks"], [])
        self.assertTrue(any("2 sets that share no process group (0,1; 2,3)" in n for n in rep["notes"]), rep["notes"])
        self.assertFalse(any("record no process groups" in n for n in rep["notes"]))

    def test_without_groups_recorded_the_report_says_so(self):
        code, rep, err = cluster_json("analyze", self.write(False), "-q")
        # every collective matched across all four ranks: ranks 2 and 3 seem to wait 24 ms per step
        self.assertEqual(rep["ranks"][2]["comm_wait_ns"], 24000000)
        self.assertTrue(any("record no process groups" in n for n in rep["notes"]), rep["notes"])

    def test_groups_survive_the_summary_and_a_merge_in_levels(self):
        d = self.write(True)
        for rank in range(4):
            r = npud("analyze", os.path.join(d, "rank-%d.json" % rank), "-q", "--format", "summary", "-o",
                     os.path.join(d, "s%d.json" % rank))
            self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(d, "s2.json")) as f:
            self.assertEqual(json.load(f)["group_names"], ["2 [2, 3]"])
        r = npud("merge", os.path.join(d, "s0.json"), os.path.join(d, "s2.json"), "--format", "summary", "-o",
                 os.path.join(d, "part.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        rep = cluster_json("merge", os.path.join(d, "part.json"), os.path.join(d, "s1.json"), os.path.join(d, "s3.json"))[1]
        self.assertEqual(rep["slow_ranks"], [])
        self.assertEqual([r["comm_wait_ns"] for r in rep["ranks"]], [0, 0, 0, 0])


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

    def test_sarif_holds_each_finding_of_the_cluster_view_once(self):
        rep = cluster_json("analyze", MULTIRANK, "-q", "--fail-on", "never")[1]
        r = npud("analyze", MULTIRANK, "-q", "--fail-on", "never", "--format", "sarif")
        self.assertEqual(r.returncode, 0, r.stderr)
        log = json.loads(r.stdout)
        results = log["runs"][0]["results"]
        # 2 ranks read of a 128-rank job
        expected = [(f["id"], f["message"] + " (on all 2 ranks read; world size 128)") for f in rep["common_findings"]]
        expected += [(f["id"], f["message"] + " (on rank%s %s of the 2 read; world size 128)" % (
                      "s" if len(f["ranks"]) > 1 else "", ",".join(map(str, f["ranks"])))) for f in rep["partial_findings"]]
        expected += [(f["id"], f["message"]) for f in rep.get("link_findings", [])]
        self.assertEqual([(x["ruleId"], x["message"]["text"]) for x in results], expected)
        self.assertTrue(rep["partial_findings"] and rep["common_findings"])  # both kinds are checked
        assert_valid_sarif(self, log)

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
                # A step_trace_time.csv beside the trace: the trace's steps are used, not it.
                with open(os.path.join(run, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), "w") as f:
                    f.write("Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free\n"
                            "1,999999,999999,0,999999,999999\n")
            code, rep, err = cluster_json("analyze", root, "-q", "--fail-on", "never")
            self.assertEqual(code, 0, err)
            self.assertEqual([r["rank"] for r in rep["ranks"]], [0, 1])
            self.assertEqual(rep["wait_basis"], "measured")
            self.assertEqual([r["comm_wait_ns"] for r in rep["ranks"]], [50000000, 5000000])
            self.assertEqual([(r["step_source"], r["wait_source"]) for r in rep["ranks"]],
                             [("trace events", "communication.json")] * 2)
            self.assertLess(rep["ranks"][0]["step_ns"], 999999000)
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


# torch_npu's step_trace_time.csv columns (microseconds per step), as the profiler writes them.
STEP_TRACE_HEADER = ["Step", "Computing", "Communication(Not Overlapped)", "Overlapped", "Communication", "Free",
                     "Stage", "Bubble", "Communication(Not Overlapped and Exclude Receive)", "Preparing"]


def step_trace_rows(rank):
    """Steps 1-3 of a 4-rank job: rank 2 spends 30-32 ms more in communication not overlapped,
    rank 3's device idles 25-26 ms more."""
    rows = []
    for i, step in enumerate((1, 2, 3)):
        computing = 80000.25 + 120.5 * rank + 40 * i
        not_overlapped = 20000.5 + 15 * rank + 10 * i + (30000 + 1000 * i if rank == 2 else 0)
        free = 10000.125 + 30 * rank + (25000.75 + 500 * i if rank == 3 else 0)
        overlapped = 5000.0 + 3 * rank
        rows.append([step, computing, not_overlapped, overlapped, not_overlapped + overlapped, free,
                     computing + not_overlapped + free, 0.0, not_overlapped, 12.5])
    return rows


def write_step_trace_ranks(root):
    """Per-rank torch_npu run directories holding only profiler_info_N.json and
    ASCEND_PROFILER_OUTPUT/step_trace_time.csv (what msprof-analyze's `cluster` reads)."""
    for rank in range(4):
        run = os.path.join(root, "node0_%d_2026010100000%d_ascend_pt" % (1000 + rank, rank))
        os.makedirs(os.path.join(run, "ASCEND_PROFILER_OUTPUT"))
        with open(os.path.join(run, "profiler_info_%d.json" % rank), "w") as f:
            json.dump({"rank_id": rank}, f)
        with open(os.path.join(run, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), "w") as f:
            f.write(",".join(STEP_TRACE_HEADER) + "\n")
            f.writelines(",".join(str(v) for v in row) + "\n" for row in step_trace_rows(rank))


def write_cluster_step_trace(root):
    """msprof-analyze's cluster_analysis_output/cluster_step_trace_time.csv for the same ranks,
    as its `cluster` command writes it (Step, Type, Index, then the rank's columns)."""
    out = os.path.join(root, "cluster_analysis_output")
    os.makedirs(out)
    with open(os.path.join(out, "cluster_step_trace_time.csv"), "w") as f:
        f.write(",".join(["Step", "Type", "Index"] + STEP_TRACE_HEADER[1:]) + "\n")
        for rank in (3, 2, 1, 0):
            for row in step_trace_rows(rank):
                f.write(",".join(str(v) for v in [row[0], "rank", rank] + row[1:]) + "\n")


# What msprof-analyze 26.2.0 reported on these same directories (`msprof-analyze cluster -d DIR
# -m all`, then `msprof-analyze advisor all -d DIR -l en`; docs/cluster.md has the table). The
# test needs no msprof-analyze: the numbers are written here.
# Per rank, the mean per step of cluster_step_trace_time.csv's rows, microseconds:
# (Computing, Communication(Not Overlapped), Overlapped, Free, Stage, Bubble).
MSPROF_RANK_MEANS_US = {0: (80040.25, 20010.5, 5000.0, 10000.125, 110050.875, 0.0),
                        1: (80160.75, 20025.5, 5003.0, 10030.125, 110216.375, 0.0),
                        2: (80281.25, 51040.5, 5006.0, 10060.125, 141381.875, 0.0),
                        3: (80401.75, 20055.5, 5009.0, 35590.875, 136048.125, 0.0)}
# The advisor's slow-rank check: "the max difference of Communication time has reached 32.05ms",
# "... of Free time has reached 26.091ms"; Computing below its 5 % threshold (not reported).
MSPROF_SPREADS_MS = {"communication not overlapped": 32.05, "free": 26.091}
# On the 8-rank fixture's ranks written as per-rank step_trace_time.csv files (or its
# cluster_analysis_output as it is): 622.989 ms and 595.773 ms.
MSPROF_FIXTURE_SPREADS_MS = {"communication not overlapped": 622.989, "free": 595.773}


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY not built")
class StepTraceTimeCluster(unittest.TestCase):
    """Ranks that hold only step_trace_time.csv, and msprof-analyze's cluster output of them."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="npud_step_trace_")

    def tearDown(self):
        shutil.rmtree(self.root)

    def assert_msprof_numbers(self, rep, step_source):
        self.assertEqual([r["rank"] for r in rep["ranks"]], [0, 1, 2, 3])
        for row in rep["ranks"]:
            computing, not_overlapped, overlapped, free, stage, bubble = MSPROF_RANK_MEANS_US[row["rank"]]
            self.assertEqual(row["steps"], 3)
            self.assertEqual(row["step_source"], step_source)
            self.assertIsNone(row["wait_source"])
            self.assertEqual(row["computing_ns"], computing * 1000)
            self.assertEqual(row["communication_ns"] - row["overlapped_ns"], not_overlapped * 1000)
            self.assertEqual(row["overlapped_ns"], overlapped * 1000)
            self.assertEqual(row["free_ns"], free * 1000)
            self.assertEqual((row["stage_ns"], row["bubble_ns"]), (stage * 1000, bubble * 1000))
            self.assertEqual(row["step_ns"], (computing + not_overlapped + free) * 1000)
        spreads = {s["dimension"]: s for s in rep["spreads"]}
        self.assertEqual(sorted(d for d, s in spreads.items() if s["above_threshold"]), sorted(MSPROF_SPREADS_MS))
        for dim, ms in MSPROF_SPREADS_MS.items():
            self.assertAlmostEqual(spreads[dim]["spread_ns"] / 1e6, ms, delta=0.0005)  # msprof rounds to 3 places
        # The outliers, with the step where each is furthest.
        self.assertEqual((spreads["communication not overlapped"]["max_rank"], spreads["communication not overlapped"]["max_step"]), (2, 3))
        self.assertEqual((spreads["free"]["max_rank"], spreads["free"]["max_step"]), (3, 3))
        slow = [(s["rank"], s["dimension"]) for s in rep["slow_ranks"]]
        self.assertIn((2, "communication"), slow)
        self.assertIn((3, "free"), slow)
        self.assertNotIn(0, [r for r, _ in slow])
        self.assertNotIn(1, [r for r, _ in slow])
        comm = next(s for s in rep["slow_ranks"] if s["dimension"] == "communication")
        self.assertIn("communication not overlapped spread across ranks 32.050 ms (rank 2 step 3", comm["message"])

    def test_per_rank_step_trace_time_directories(self):
        write_step_trace_ranks(self.root)
        code, rep, err = cluster_json("analyze", self.root, "-q", "--fail-on", "never")
        self.assertEqual(code, 0, err)
        self.assert_msprof_numbers(rep, "step_trace_time.csv")
        text = npud("analyze", self.root, "-q", "--fail-on", "never").stdout
        self.assertIn("step times from: step_trace_time.csv (ranks 0,1,2,3)", text)
        self.assertIn("communication not overlapped      32.050 ms  max rank 2 step 3 (52.050 ms), "
                      "min rank 0 step 1 (20.000 ms): above", text)
        self.assertNotIn("slow ranks (more than 5.0% of a step above the others' median):\n  none", text)
        html = npud("analyze", self.root, "-q", "--fail-on", "never", "--format", "html").stdout
        self.assertIn('id="spreads"', html)
        self.assertIn("step times from: step_trace_time.csv", html)

    def test_msprof_analyze_cluster_output_of_the_same_ranks(self):
        write_cluster_step_trace(self.root)
        code, rep, err = cluster_json("analyze", self.root, "-q", "--fail-on", "never")
        self.assertEqual(code, 0, err)
        self.assert_msprof_numbers(rep, "cluster_step_trace_time.csv")
        # Both inputs there: msprof-analyze's output is read, as before.
        write_step_trace_ranks(self.root)
        self.assertEqual(cluster_json("analyze", self.root, "-q", "--fail-on", "never")[1]["spreads"], rep["spreads"])

    def test_a_summary_keeps_the_step_table_and_its_source(self):
        write_step_trace_ranks(self.root)
        direct = cluster_json("analyze", self.root, "-q", "--fail-on", "never")[1]
        summaries = os.path.join(self.root, "summaries")
        os.makedirs(summaries)
        for rank, run in enumerate(sorted(glob.glob(os.path.join(self.root, "*_ascend_pt")))):
            r = npud("analyze", run, "--format", "summary", "-o", os.path.join(summaries, "rank%d.json" % rank), "-q")
            self.assertIn(r.returncode, (0, 1), r.stderr)
        merged = cluster_json("merge", summaries, "--fail-on", "never")[1]
        self.assertEqual(without_source(merged), without_source(direct))

    @unittest.skipUnless(os.path.isdir(MSPROF), "shared fixtures absent (NPUD_SHARED_DIR)")
    def test_the_8_rank_fixture_gives_msprof_analyzes_spreads(self):
        # Its cluster_analysis_output as it is, and its rows written as per-rank step_trace_time.csv.
        with open(os.path.join(MSPROF, "cluster_analysis_output", "cluster_step_trace_time.csv")) as f:
            lines = f.read().splitlines()
        header = lines[0].split(",")
        for line in lines[1:]:
            cells = line.split(",")
            if cells[1] != "rank":
                continue
            run = os.path.join(self.root, "node0_%s_20260101_ascend_pt" % cells[2])
            os.makedirs(os.path.join(run, "ASCEND_PROFILER_OUTPUT"))
            with open(os.path.join(run, "profiler_info_%s.json" % cells[2]), "w") as f:
                f.write("{}")
            with open(os.path.join(run, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), "w") as f:
                f.write(",".join(["Step"] + header[3:]) + "\n" + ",".join([cells[0]] + cells[3:]) + "\n")
        for source, step_source in ((MSPROF, "cluster_step_trace_time.csv"), (self.root, "step_trace_time.csv")):
            code, rep, err = cluster_json("analyze", source, "-q", "--fail-on", "never")
            self.assertEqual(code, 0, err)
            self.assertEqual({r["step_source"] for r in rep["ranks"]}, {step_source})
            spreads = {s["dimension"]: s for s in rep["spreads"]}
            for dim, ms in MSPROF_FIXTURE_SPREADS_MS.items():
                self.assertAlmostEqual(spreads[dim]["spread_ns"] / 1e6, ms, delta=0.0005)
                self.assertTrue(spreads[dim]["above_threshold"])
            self.assertEqual((spreads["communication not overlapped"]["max_rank"], spreads["free"]["max_rank"]), (5, 1))
            self.assertEqual((rep["slow_ranks"][0]["rank"], rep["slow_ranks"][0]["dimension"]), (1, "free"))


if __name__ == "__main__":
    unittest.main()
