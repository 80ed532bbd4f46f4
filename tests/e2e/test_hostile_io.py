"""End to end (issue 42): every input has a bound, every output is checked, no input is replaced,
no name reaches the terminal raw, and no comment silences more than it names.

Each class of the round-4 failures is tried in several spellings (closed stdout and a full disk;
a path, a link and a hard link to an input; stdin from a pipe, a file and /dev/zero; a FIFO and a
device as a mapping; ...), so a fix of one spelling only would fail here."""

import json
import os
import subprocess
import unittest

from e2e_support import PYTHON, Folder, python_has

BINARY = os.environ.get("NPUD_BINARY", "")
TRACE = ('{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},'
         '{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":5}]}')
ESC = "\x1b[2J\x1b]0;pwned\x07"


def npud(args, cwd, stdin=None, stdout=subprocess.PIPE, input_bytes=None):
    r = subprocess.run([BINARY, *args], cwd=cwd, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                       input=input_bytes, timeout=120)
    return r.returncode, (r.stdout or b"").decode(errors="replace"), r.stderr.decode(errors="replace")


@unittest.skipUnless(BINARY, "needs NPUD_BINARY")
class HostileInputsAndOutputs(unittest.TestCase):
    def setUp(self):
        self.folder = Folder("npud-hostile-")
        self.dir = self.folder.path
        self.write = self.folder.write

    def tearDown(self):
        self.folder.close()

    def test_a_report_that_cannot_reach_stdout_is_an_error(self):
        # F-5: closed stdout and a full disk, for a report and for what `rules` prints.
        self.write("t.json", TRACE)
        self.write("p.py", "import torch\nx = torch.zeros(3).cuda()\n")
        commands = [["analyze", "--no-config", "t.json"], ["scan", "--no-config", "p.py", "--format", "json"],
                    ["rules"], ["analyze", "--no-config", "t.json", "-o", "-"]]
        with open("/dev/full", "w") as full:
            for args in commands:
                for out, what in ((full, "No space left on device"), (subprocess.DEVNULL, None)):
                    with self.subTest(args=args, out=what):
                        code, _, err = npud(args, self.dir, stdout=out)
                        if what:   # the reason, where the C library still holds it when flushing
                            self.assertEqual(code, 2, err)
                            self.assertIn("cannot write the report to stdout: ", err)
                        else:
                            self.assertIn(code, (0, 1), err)
        # A closed stdout: the shell's `>&-`.
        r = subprocess.run("exec >&-; exec %s analyze --no-config t.json" % BINARY, shell=True, cwd=self.dir,
                           stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot write the report to stdout: stdout is closed", r.stderr.decode())

    def test_no_output_replaces_an_input_whatever_its_spelling(self):
        # F-12: the same file by path, by another relative spelling, by a link, by a hard link.
        trace = self.write("t.json", TRACE)
        prog = self.write("p.py", "import torch\nx = torch.zeros(3).cuda()\n")
        os.symlink("t.json", os.path.join(self.dir, "link.json"))
        os.link(trace, os.path.join(self.dir, "hard.json"))
        cases = [["analyze", "--no-config", "t.json", "-o", "t.json"],
                 ["analyze", "--no-config", "t.json", "-o", "./sub/../t.json"],
                 ["analyze", "--no-config", "t.json", "-o", "link.json"],
                 ["analyze", "--no-config", "t.json", "--write-baseline", "hard.json"],
                 ["scan", "--no-config", "p.py", "--write-baseline", "p.py"],
                 ["scan", "--no-config", ".", "-o", "p.py"],
                 ["diff", "t.json", "t.json", "-o", "t.json"],
                 ["run", "--no-config", "-o", "p.py", "--", PYTHON, "p.py"]]
        os.makedirs(os.path.join(self.dir, "sub"))
        for args in cases:
            with self.subTest(args=args):
                code, out, err = npud(args, self.dir)
                self.assertEqual(code, 2, err)
                self.assertIn("it is an input of this command", err)
                with open(trace) as f:
                    self.assertEqual(f.read(), TRACE)
                with open(prog) as f:
                    self.assertEqual(f.read(), "import torch\nx = torch.zeros(3).cuda()\n")
        # scan --fix rewrites its inputs: that is its job.
        code, out, err = npud(["scan", "--no-config", "p.py", "--fix"], self.dir)
        self.assertIn(code, (0, 1), err)
        with open(prog) as f:
            self.assertIn(".npu()", f.read())
        code, out, err = npud(["analyze", "--no-config", "t.json", "--write-baseline", "-"], self.dir)
        self.assertEqual(code, 2, err)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "-")))

    def test_names_reach_the_terminal_as_text(self):
        # F-17: a file name, a rank file, a rule and a topic holding escape sequences.
        bad = os.path.basename(self.write("rank-2%s.json" % ESC, "garbage"))
        self.write("t.json", TRACE)
        for args in (["analyze", "--no-config", bad], ["merge", bad], ["diff", bad, "t.json"],
                     ["rules", ESC + "SYNC"], ["docs", ESC + "x"], ["analyze", "--no-config", "t.json", "--select", ESC]):
            with self.subTest(args=args):
                code, out, err = npud(args, self.dir)
                self.assertEqual(code, 2, err)
                self.assertNotIn("\x1b", err + out)
                self.assertNotIn("\x07", err + out)
                self.assertIn("\\x1b", err)

    def test_stdin_is_bounded_named_and_leaves_nothing_behind(self):
        # F-9, F-10: a pipe, a file and an endless device on stdin; the temporary copy is never
        # left in TMPDIR; errors name `-`.
        tmp = os.path.join(self.dir, "tmp")
        os.makedirs(tmp)
        env = dict(os.environ, TMPDIR=tmp)
        trace = self.write("t.json", TRACE)
        def run(args, **kw):
            r = subprocess.run([BINARY, *args], cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env, timeout=120, **kw)
            return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
        with open(trace, "rb") as f:
            piped = f.read()
        for label in ("pipe", "file"):
            with self.subTest(stdin=label), open(trace, "rb") as f:
                kw = {"input": piped} if label == "pipe" else {"stdin": f}
                code, out, err = run(["analyze", "--no-config", "-", "--format", "json"], **kw)
                self.assertIn(code, (0, 1), err)
                self.assertEqual(json.loads(out)["summary"]["source"], "-")
        for data, said in ((b"\x00" * 100000, "-: byte 0: not JSON or gzip"), (b"  \n", "-: stdin is empty"),
                           (b'{"traceEvents": [', "-: byte")):
            with self.subTest(data=data[:4]):
                code, out, err = run(["analyze", "--no-config", "-"], input=data)
                self.assertEqual(code, 2, err)
                self.assertIn(said, err)
                self.assertNotIn("npu-doctor-stdin", err)
        with open("/dev/zero", "rb") as zero:
            code, out, err = run(["scan", "--no-config", "-"], stdin=zero)
        self.assertEqual(code, 2, err)
        self.assertIn("-: more than 256 MiB on stdin", err)
        code, out, err = run(["scan", "--no-config", "-"], input=b"x = '\xff\xfe'\n")
        self.assertEqual(code, 2, err)   # its only input was not scanned
        self.assertEqual(os.listdir(tmp), [])

    def test_special_files_and_flow_yaml_as_a_mapping_are_refused_at_once(self):
        # F-11: a FIFO, a device and flow-style YAML; the compare folders themselves are fine.
        header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
        header += " " * (63 - (len(header) + 10) % 64) + "\n"
        npy = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + b"\x00" * 8
        for side in ("a", "b"):
            os.makedirs(os.path.join(self.dir, side))
            with open(os.path.join(self.dir, side, "t.npy"), "wb") as f:
                f.write(npy)
        fifo = os.path.join(self.dir, "m.yaml")
        os.mkfifo(fifo)
        flow = self.write("flow.yaml", "{a.b: c.d, e.f: g.h}\n")
        for mapping, said in ((fifo, "not a regular file: it is a FIFO"), ("/dev/zero", "character device"),
                              (flow, "flow-style YAML")):
            with self.subTest(mapping=mapping):
                code, out, err = npud(["compare", "a", "b", "--mapping", mapping], self.dir)
                self.assertEqual(code, 2, err)
                self.assertIn(said, err)

    def test_merge_names_a_rank_file_that_is_no_summary(self):
        # F-19: in a folder, `rank-2.json` that is no summary is an error naming it; another JSON
        # file is skipped with a note naming it.
        self.write("r.json", '{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,'
                             '"tid":1,"ts":0,"dur":100}],"distributedInfo":{"rank":0,"world_size":3}}')
        os.makedirs(os.path.join(self.dir, "s"))
        code, out, err = npud(["analyze", "--no-config", "r.json", "--format", "summary", "-o", "s/rank-0.json"],
                              self.dir)
        self.assertEqual(code, 0, err)
        for name, text in (("rank-2.json", "{}"), ("rank-1.json", '{"kind": "other"}'), ("notes.json", "[]")):
            self.write("s/" + name, text)
        code, out, err = npud(["merge", "s"], self.dir)
        self.assertEqual(code, 2, err)
        self.assertIn("s/rank-2.json: not a rank summary", err)
        self.assertIn("s/rank-1.json: not a rank summary", err)
        self.assertIn("note: skipped s/notes.json: not a rank summary", err)

    def test_a_foreign_pyproject_above_does_not_block(self):
        # F-14: too big or unreadable; another tool's, so passed by with a note.
        self.write("pyproject.toml", "[tool.other]\nx = '" + "y" * (5 << 20) + "'\n")
        self.write("sub/t.json", TRACE)
        code, out, err = npud(["analyze", "sub/t.json"], self.dir)
        self.assertIn(code, (0, 1), err)
        self.assertIn("note: skipped", err)
        self.assertIn("pyproject.toml while looking for [tool.npu-doctor]", err)

    def test_a_blank_before_the_bracket_never_silences_every_rule(self):
        # F-4: line and file directives, space and tab; and a noqa whose prose names a rule.
        for comment in ("# npu-doctor: ignore [SYNC101]", "# npu-doctor: ignore\t[SYNC101]",
                        "# noqa: E501 -- see CUDA002"):
            with self.subTest(comment=comment):
                self.write("p.py", "import torch\nx = torch.zeros(3).cuda()  %s\n" % comment)
                code, out, err = npud(["scan", "--no-config", "p.py", "--format", "json"], self.dir)
                self.assertIn("CUDA002", [f["id"] for f in json.loads(out)["findings"]], comment)
        self.write("p.py", "# npu-doctor: ignore-file [SYNC101]\nimport torch\nx = torch.zeros(3).cuda()\n")
        code, out, err = npud(["scan", "--no-config", "p.py", "--format", "json"], self.dir)
        self.assertIn("CUDA002", [f["id"] for f in json.loads(out)["findings"]])

    def test_a_report_is_bounded_by_what_it_shows_not_by_name_length(self):
        # F-16: ops named with 200 KB each: every format stays far below the names' size.
        events = ['{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":10000}']
        for i in range(5):
            events.append('{"ph":"X","cat":"cpu_op","name":"aten::zz_%d_%s","pid":1,"tid":1,"ts":%d,"dur":5}'
                          % (i, "q" * 200000, 10 + i * 10))
        self.write("big.json", '{"traceEvents":[%s]}' % ",".join(events))
        for fmt in ("json", "html", "sarif", "text"):
            with self.subTest(format=fmt):
                out = os.path.join(self.dir, "out." + fmt)
                code, _, err = npud(["analyze", "--no-config", "big.json", "--format", fmt, "-o", out,
                                     "--fail-on", "never"], self.dir)
                self.assertEqual(code, 0, err)
                self.assertLess(os.path.getsize(out), 200000, fmt)

    @unittest.skipUnless(python_has("torch"), "needs torch to write .pt files")
    def test_views_of_one_storage_are_read_once(self):
        # F-8: torch.save of N names of one tensor is one storage; compare reads it once.
        code = ("import torch, sys\nt = torch.arange(65536, dtype=torch.float32)\n"
                "for side in ('a', 'b'):\n    torch.save({'w%d' % k: t for k in range(300)}, side + '/s.pt')\n")
        for side in ("a", "b"):
            os.makedirs(os.path.join(self.dir, side))
        subprocess.run([PYTHON, "-c", code], cwd=self.dir, check=True, timeout=120)
        code, out, err = npud(["compare", "a", "b", "--format", "json"], self.dir)
        self.assertEqual(code, 0, err)
        doc = json.loads(out)
        self.assertEqual(doc["summary"]["matched"], 300)
        self.assertEqual(doc["summary"]["tensor_bytes"], 2 * 65536 * 4, doc["summary"])


if __name__ == "__main__":
    unittest.main()
