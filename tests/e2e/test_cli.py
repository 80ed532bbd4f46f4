"""The command line as a user meets it: a mistyped command gets "did you mean", each command's
--help talks about its own options only. Needs the built binary (NPUD_BINARY), not torch."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

BINARY = os.environ.get("NPUD_BINARY", "")


def npud(*args, env=None):
    full_env = dict(os.environ)
    full_env.pop("COLUMNS", None)   # the width is each test's choice
    full_env.update(env or {})
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=60, env=full_env)


SOURCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def commands():
    """The commands `npu-doctor --help` lists."""
    out = npud("--help", env={"COLUMNS": "1000"}).stdout
    listed = out[out.index("Subcommands:"):].splitlines()[1:]
    return [line.split()[0] for line in listed if line.startswith("  ") and line.split()]


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class CommandLine(unittest.TestCase):
    def test_mistyped_command_gets_did_you_mean(self):
        for typo, meant in (("anlyze", "analyze"), ("scna", "scan"), ("amp-chek", "amp-check"), ("ver", "versions")):
            with self.subTest(typo=typo):
                r = npud(typo, "x")
                self.assertEqual(r.returncode, 2)
                self.assertIn("unknown command '%s'; did you mean '%s'?" % (typo, meant), r.stderr)
        r = npud("frobnicate")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown command 'frobnicate'", r.stderr)
        self.assertNotIn("did you mean", r.stderr)

    def test_help_of_listing_commands_does_not_mention_fail_on(self):
        for cmd in ("rules", "versions"):
            with self.subTest(cmd=cmd):
                r = npud(cmd, "--help")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertNotIn("--fail-on", r.stdout)

    def test_run_and_analyze_share_the_meaning_of_o(self):
        for cmd in ("run", "amp-check", "analyze"):
            with self.subTest(cmd=cmd):
                r = npud(cmd, "--help")
                line = next(l for l in r.stdout.splitlines() if "-o," in l)
                self.assertIn("report", line)
        self.assertIn("--capture-dir", npud("run", "--help").stdout)

    def test_dash_output_is_stdout_in_every_command(self):
        # `-o -` wrote a file named "-" (one was committed by accident in this project).
        trace = os.path.join(SOURCE_DIR, "tests", "data", "chrome", "small_object.json")
        script = os.path.join(SOURCE_DIR, "tests", "data", "scan", "cuda001_device_string.py")
        with tempfile.TemporaryDirectory() as tmp:
            for args in (("analyze", trace, "-q", "--fail-on", "never", "--format", "json"),
                         ("scan", script, "--fail-on", "never", "--format", "json"), ("diff", trace, trace, "--format", "json")):
                with self.subTest(cmd=args[0]):
                    r = subprocess.run([BINARY, *args, "-o", "-"], capture_output=True, text=True,
                                       timeout=60, cwd=tmp)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertEqual(json.loads(r.stdout)["schema_version"], 1)
                    self.assertEqual(os.listdir(tmp), [])
            self.assertIn("- is stdout", npud("merge", "--help", env={"COLUMNS": "200"}).stdout)

    def test_select_and_ignore_mean_the_same_in_every_command(self):
        """Ids, id prefixes or rule names in any case (one filter: model/rule_filter.hpp); an entry
        that matches no rule is refused with exit 2, naming it and the closest rule."""
        here = os.path.dirname(os.path.abspath(__file__))
        trace = os.path.join(here, "..", "data", "chrome", "small_object.json")
        script = os.path.join(here, "..", "..", "examples", "tiny_gpt", "train.py")
        for args in (("analyze", "--select", "sync", trace), ("analyze", "--ignore", "hot,Idle", trace),
                     ("analyze", "--select", "Host-Device-Sync,fuse00", trace),
                     ("scan", "--select", "sync", script), ("scan", "--ignore", "cuda", script),
                     ("scan", "--select", "cuda00,SYNC101", script)):
            with self.subTest(args=args):
                r = npud(*args, "--format", "json")
                self.assertNotEqual(r.returncode, 2, r.stderr)
        program = os.path.join(here, "programs", "sync_item.py")
        for args in (("analyze", "--select", "sinc", trace), ("analyze", "--ignore", "sinc", trace),
                     ("scan", "--select", "sinc", script), ("scan", "--ignore", "sinc", script),
                     ("run", "--select", "sinc", "--", sys.executable, program),
                     ("amp-check", "--ignore", "sinc", "--", sys.executable, program)):
            with self.subTest(args=args):
                r = npud(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("%s sinc: no rule id, id prefix or name matches it; did you mean SYNC?" % args[1],
                              r.stderr)
        r = npud("analyze", "--select", "host-device-snyc", trace)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("did you mean host-device-sync?", r.stderr)
        # a selector of the other command's rules says so (scan's CUDA ids in analyze, SYNC001's name in scan)
        for args in (("analyze", "--select", "cuda", trace), ("scan", "--select", "host-device-sync", script)):
            with self.subTest(args=args):
                r = npud(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("names another command's rules", r.stderr)

    def test_select_by_name_runs_that_rule(self):
        here = os.path.dirname(os.path.abspath(__file__))
        trace = os.path.join(here, "..", "data", "chrome", "small_object.json")
        by_id = json.loads(npud("analyze", trace, "--select", "SYNC001", "--format", "json", "--fail-on", "never").stdout)
        by_name = json.loads(npud("analyze", trace, "--select", "host-device-sync", "--format", "json",
                                  "--fail-on", "never").stdout)
        self.assertEqual(by_name["summary"]["rules_run"], by_id["summary"]["rules_run"])
        self.assertEqual(by_name["findings"], by_id["findings"])

    def test_numbers_out_of_range_are_refused(self):
        for args in (("analyze", "--top", "-1", "x.json"), ("analyze", "--min-gap-us", "-1", "x.json"),
                     ("analyze", "--min-gap-us", "nan", "x.json"), ("compare", "--min-cos", "nan", "a", "b"),
                     ("compare", "--min-cos", "2", "a", "b"), ("diff", "--top", "-3", "a", "b")):
            with self.subTest(args=args):
                r = npud(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("is not a number from", r.stderr)

    def test_fifo_inputs_are_refused_not_waited_on(self):
        tmp = tempfile.mkdtemp(prefix="npud-fifo-")
        try:
            for name, args in (("trace.json", ("analyze",)), ("train.py", ("scan",)), ("a.npy", ("compare",))):
                with self.subTest(name=name):
                    fifo = os.path.join(tmp, name)
                    os.mkfifo(fifo)
                    extra = (fifo,) if args != ("compare",) else (fifo, fifo)
                    r = npud(*args, *extra)   # would block forever on open() before
                    self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                    self.assertIn("FIFO", r.stderr)
        finally:
            shutil.rmtree(tmp)

    def test_program_dies_with_a_killed_run(self):
        """SIGKILL of `npu-doctor run` used to leave the program running (and capturing)."""
        tmp = tempfile.mkdtemp(prefix="npud-orphan-")
        try:
            pidfile = os.path.join(tmp, "pid")
            code = "import os, time; open(%r, 'w').write(str(os.getpid())); time.sleep(120)" % pidfile
            p = subprocess.Popen([BINARY, "run", "-q", "--capture-dir", tmp, "--", "/usr/bin/python3", "-c", code],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(300):
                if os.path.exists(pidfile) and open(pidfile).read():
                    break
                time.sleep(0.05)
            pid = int(open(pidfile).read())
            p.send_signal(signal.SIGKILL)
            p.wait()
            for _ in range(100):
                try:
                    with open("/proc/%d/stat" % pid) as f:
                        if f.read().split()[2] == "Z":
                            break
                except FileNotFoundError:
                    break
                time.sleep(0.05)
            else:
                os.kill(pid, signal.SIGKILL)
                self.fail("the program outlived the killed npu-doctor run")
        finally:
            shutil.rmtree(tmp)

    def test_python_flags_that_hide_the_shim_are_named(self):
        """#18: `run -- python3 -E` ignored PYTHONPATH, so no capture, and the message blamed
        the program. Now: exit 2 before it starts, naming the flag."""
        tmp = tempfile.mkdtemp(prefix="npud-flags-")
        try:
            # Options with a value before it (-X dev, -W ignore, -uWignore) are skipped as a whole.
            for before, flag in (((), "-E"), ((), "-I"), ((), "-sE"), (("-X", "dev"), "-E"),
                                 (("-W", "ignore", "-uWignore"), "-I"), (("--check-hash-based-pycs", "never"), "-E")):
                r = npud("run", "-q", "--capture-dir", tmp, "--", "/usr/bin/python3", *before, flag, "-c", "print('ran')")
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("`/usr/bin/python3 %s` ignores PYTHONPATH" % flag, r.stderr)
                self.assertNotIn("ran", r.stdout)
            # -X's value is no flag: `-X E` (an unknown -X option, ignored) keeps the shim.
            r = npud("run", "-q", "--fail-on", "never", "--capture-dir", tmp, "--", "/usr/bin/python3", "-X", "E",
                     "-c", "print('ran')")
            self.assertNotIn("ignores PYTHONPATH", r.stderr)
            self.assertIn("ran", r.stdout)
        finally:
            shutil.rmtree(tmp)

    def test_two_runs_never_share_a_capture_dir(self):
        """#18: two runs with one --capture-dir used to interleave into one capture; the second
        is refused at once (exit 2) while the first goes on and reports on its own events."""
        tmp = tempfile.mkdtemp(prefix="npud-lock-")
        try:
            started = os.path.join(tmp, "started")
            code = "import time; open(%r, 'w').write('1'); time.sleep(3)" % started
            first = subprocess.Popen([BINARY, "run", "-q", "--capture-dir", tmp, "--", "/usr/bin/python3", "-c", code],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(300):
                if os.path.exists(started):
                    break
                time.sleep(0.05)
            second = npud("run", "-q", "--capture-dir", tmp, "--", "/usr/bin/python3", "-c", "print('ran')")
            self.assertEqual(second.returncode, 2, second.stderr)
            self.assertIn("another npu-doctor run is writing its capture in", second.stderr)
            self.assertNotIn("ran", second.stdout)   # refused before the program started
            first.communicate(timeout=120)
            # The lock goes with the process: a later run may use the folder.
            third = npud("run", "-q", "--capture-dir", tmp, "--", "/usr/bin/python3", "-c", "print('ran')")
            self.assertNotIn("another npu-doctor run", third.stderr)
        finally:
            shutil.rmtree(tmp)

    def test_program_options_before_the_double_dash_are_refused(self):
        """#30: `run python3 train.py --steps 2` (no `--`) gave --steps to npu-doctor and ran the
        program with its default. Now exit 2 before it starts, saying where `--` goes."""
        tmp = tempfile.mkdtemp(prefix="npud-dashdash-")
        try:
            ran = os.path.join(tmp, "ran")
            code = "open(%r, 'w').write('1')" % ran
            for cmd in ("run", "amp-check"):
                for args in (("/usr/bin/python3", "-c", code), ("-q", "/usr/bin/python3", "x.py", "--steps", "2"),
                             ("--capture-dir", tmp, "/usr/bin/python3", "x.py", "-o", "r.txt")):
                    with self.subTest(cmd=cmd, args=args):
                        r = npud(cmd, *args)
                        self.assertEqual(r.returncode, 2, r.stderr)
                        self.assertIn("put `--` before the program: npu-doctor %s [OPTIONS] -- /usr/bin/python3" % cmd,
                                      r.stderr)
                        self.assertFalse(os.path.exists(ran))
            # With `--` (or without options after the program) nothing is refused.
            r = npud("run", "-q", "--capture-dir", tmp, "--steps", "0", "--", "/usr/bin/python3", "-c", code)
            self.assertNotIn("put `--`", r.stderr)
            self.assertTrue(os.path.exists(ran), r.stderr)
        finally:
            shutil.rmtree(tmp)

    def test_version_and_help_spellings(self):
        """#30: -V failed and `npu-doctor help` was an unknown command."""
        for args in (("-V",), ("--version",)):
            with self.subTest(args=args):
                r = npud(*args)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(r.stdout.startswith("npu-doctor "), r.stdout)
        self.assertEqual(npud("help").stdout, npud("--help").stdout)
        r = npud("help", "scan")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, npud("scan", "--help").stdout)
        r = npud("help", "scna")
        self.assertEqual(r.returncode, 2)
        self.assertIn("did you mean 'scan'", r.stderr)

    def test_rules_takes_every_name_it_lists(self):
        """#30: `rules` listed host-device-sync but `rules host-device-sync` failed."""
        doc = npud("rules", "SYNC001").stdout
        self.assertTrue(doc)
        for word in ("sync001", "host-device-sync", "Host-Device-Sync"):
            with self.subTest(word=word):
                r = npud("rules", word)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout, doc)
        profile_rules = True   # their lines: id, name, summary; source rules: id, (fixable), summary
        for line in npud("rules").stdout.splitlines():
            if line.startswith("Source rules"):
                profile_rules = False
            words = line.split()
            if not line.startswith("  ") or not words:
                continue   # headings
            for word in words[:2] if profile_rules else words[:1]:
                with self.subTest(word=word):
                    self.assertEqual(npud("rules", word).returncode, 0, word)
        self.assertEqual(npud("rules", "nosuch").returncode, 2)


    def test_help_of_every_command_fits_the_terminal_width(self):
        """#30: 12 of 20 `--help` lines were over 80 columns. COLUMNS, else the window of a
        terminal on stdout, else 80."""
        cmds = commands()
        for expected in ("analyze", "run", "scan", "docs", "completion"):
            self.assertIn(expected, cmds)
        for width, env in ((80, {"COLUMNS": "80"}), (120, {"COLUMNS": "120"}), (80, {})):
            for cmd in [()] + [(c,) for c in cmds]:
                with self.subTest(width=width, env=env, cmd=cmd):
                    r = npud(*cmd, "--help", env=env)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertEqual([l for l in r.stdout.splitlines() if len(l) > width], [])
        wide = npud("scan", "--help", env={"COLUMNS": "120"}).stdout
        self.assertGreater(max(len(l) for l in wide.splitlines()), 80)   # the width is used, not 80 always
        # A command to copy (in backquotes) stays on one line.
        self.assertIn("`patch -d / -p1`", npud("scan", "--help", env={"COLUMNS": "80"}).stdout)

    def test_top_problems_wrap_at_the_terminal_width(self):
        """#30: top-problem lines were cut at 128 characters whatever the width; #40: cut mid-word
        at the terminal's width, they lost the end of the message: they wrap under themselves."""
        trace = os.path.join(SOURCE_DIR, "tests", "data", "chrome", "small_object.json")
        for width in (80, 120):
            with self.subTest(width=width):
                out = npud("analyze", "--fail-on", "never", trace, env={"COLUMNS": str(width)}).stdout
                top = out[out.index("top problems"):].split("\n\n")[0].splitlines()[1:]
                self.assertGreaterEqual(len([l for l in top if re.match(r"  \d\. ", l)]), 2, out)
                self.assertTrue(all(len(l) <= width for l in top), top)
                self.assertFalse(any(l.endswith("...") for l in top), top)
                if width == 80:
                    self.assertTrue(any(not re.match(r"  \d\. ", l) for l in top), top)   # a wrapped line
        # In a file (or a pipe without COLUMNS): the fixed width of before, 127 columns.
        out = npud("analyze", "--fail-on", "never", trace).stdout
        top = out[out.index("top problems"):].split("\n\n")[0].splitlines()[1:]
        self.assertTrue(all(len(l) <= 127 for l in top), top)

    def test_docs_prints_the_docs_that_reports_and_help_cite(self):
        """#30: reports and --help cited docs/... files that a pip install lacks."""
        listing = npud("docs")
        self.assertEqual(listing.returncode, 0, listing.stderr)
        topics = [l.split()[0] for l in listing.stdout.splitlines() if l.startswith("  ")]
        self.assertEqual([l for l in listing.stdout.splitlines() if len(l) > 80], [])
        for expected in ("configuration", "capture", "formats/capture", "formats/dump", "json-schema", "cost-model"):
            self.assertIn(expected, topics)
        self.assertIn("example", topics)   # issue 40: the wheel's way to the bundled example
        for topic in topics:
            with self.subTest(topic=topic):
                r = npud("docs", topic)
                self.assertEqual(r.returncode, 0, r.stderr)
                source = ("examples", "tiny_gpt", "train.py") if topic == "example" else ("docs", topic + ".md")
                with open(os.path.join(SOURCE_DIR, *source)) as f:
                    self.assertEqual(r.stdout, f.read())
        self.assertEqual(npud("docs", "docs/formats/dump.md").stdout, npud("docs", "formats/dump").stdout)
        for word in ("sync001", "host-device-sync", "docs/rules/SYNC001.md"):
            self.assertEqual(npud("docs", word).stdout, npud("rules", "SYNC001").stdout, word)
        r = npud("docs", "nosuch")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no doc 'nosuch'", r.stderr)
        # Every `npu-doctor docs X` a --help cites is there, and no --help cites docs/X.md.
        for cmd in [()] + [(c,) for c in commands()]:
            text = npud(*cmd, "--help", env={"COLUMNS": "1000"}).stdout
            with self.subTest(cmd=cmd):
                self.assertNotRegex(text, r"docs/[\w/-]+\.md")
                for topic in set(re.findall(r"`npu-doctor docs ([\w/.-]+)`", text)) - {"TOPIC"}:
                    self.assertEqual(npud("docs", topic).returncode, 0, topic)

    def test_no_message_cites_a_docs_file(self):
        """What the binary prints names `npu-doctor docs X`, never docs/X.md (string literals of
        src/; comments may cite the files)."""
        cited = []
        for root, _, files in os.walk(os.path.join(SOURCE_DIR, "src")):
            for name in files:
                if not name.endswith((".cpp", ".hpp")) or name == "docs_cmd.cpp":
                    continue
                with open(os.path.join(root, name)) as f:
                    for n, line in enumerate(f, 1):
                        code = line.split("//")[0]
                        if re.search(r'"[^"]*docs/[\w/-]+\.md', code):
                            cited.append("%s:%d" % (name, n))
        self.assertEqual(cited, [])
        topics = set()
        for root, _, files in os.walk(os.path.join(SOURCE_DIR, "src")):
            for name in files:
                if name.endswith(".cpp"):
                    with open(os.path.join(root, name)) as f:
                        topics.update(re.findall(r"`npu-doctor docs ([\w/.-]+)`", f.read()))
        self.assertIn("cost-model", topics)
        for topic in topics - {"TOPIC", "ID"}:
            self.assertEqual(npud("docs", topic).returncode, 0, topic)

    def test_completion_scripts_come_from_the_command_table(self):
        cmds = commands()
        bash = npud("completion", "bash")
        self.assertEqual(bash.returncode, 0, bash.stderr)
        self.assertEqual(subprocess.run(["bash", "-n"], input=bash.stdout, text=True).returncode, 0)

        def complete(*words):
            script = bash.stdout + "COMP_WORDS=(npu-doctor %s); COMP_CWORD=%d; _npu_doctor; printf '%%s\\n' \"${COMPREPLY[@]}\"\n" % (
                " ".join("'%s'" % w for w in words), len(words))
            return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60).stdout.split()

        self.assertEqual(set(complete("")), set(cmds) | {"help", "-V", "--version", "-h", "--help"})
        self.assertIn("--no-config", complete("scan", "--"))
        self.assertIn("--capture-dir", complete("run", "--"))
        self.assertNotIn("--out-dir", complete("run", "--"))   # a hidden, retired spelling
        self.assertIn("formats/dump", complete("docs", ""))
        for shell, check in (("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])):
            with self.subTest(shell=shell):
                r = npud("completion", shell)
                self.assertEqual(r.returncode, 0, r.stderr)
                for cmd in cmds:
                    self.assertIn("'%s'" % cmd, r.stdout)
                if shutil.which(check[0]):
                    self.assertEqual(subprocess.run(check, input=r.stdout, text=True).returncode, 0)
        self.assertEqual(npud("completion", "tcsh").returncode, 2)


SMALL_TRACE = os.path.join(SOURCE_DIR, "tests", "data", "chrome", "small_object.json")


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class ReportFilesAndInputs(unittest.TestCase):
    """Issue 40 item 6: what costs a user minutes around -o and the wrong kind of input."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_the_extension_of_o_names_the_format_and_the_report_says_where_it_went(self):
        for name, starts in (("report.html", "<!DOCTYPE html>"), ("report.json", "{"), ("results.sarif", "{"),
                             ("report.txt", "")):
            with self.subTest(name):
                path = os.path.join(self.tmp, name)
                r = npud("analyze", SMALL_TRACE, "--fail-on", "never", "-o", path)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout, "")
                self.assertIn(f"report written to {path}", r.stderr)
                with open(path) as f:
                    text = f.read()
                self.assertTrue(text.startswith(starts), text[:80])
                if name == "results.sarif":
                    self.assertEqual(json.loads(text)["version"], "2.1.0")
                if name == "report.txt":
                    self.assertFalse(text.startswith(("{", "<")), text[:80])
        r = npud("analyze", SMALL_TRACE, "--fail-on", "never", "-q", "-o", os.path.join(self.tmp, "quiet.json"))
        self.assertEqual((r.returncode, r.stderr), (0, ""))   # -q: not even where it went
        # An extension the command does not write leaves the default (env writes no HTML).
        r = npud("env", "-o", os.path.join(self.tmp, "env.html"))   # exit 1: this machine has no NPU stack
        self.assertIn(r.returncode, (0, 1), r.stderr)
        with open(os.path.join(self.tmp, "env.html")) as f:
            self.assertFalse(f.read().startswith("<"))

    def test_a_format_the_extension_contradicts_is_refused(self):
        path = os.path.join(self.tmp, "report.html")
        r = npud("analyze", SMALL_TRACE, "--format", "text", "-o", path)
        self.assertEqual(r.returncode, 2)
        self.assertIn("report.html names html output, but --format is text", r.stderr)
        self.assertFalse(os.path.exists(path))
        # JSON-shaped formats may go to a .json file
        r = npud("analyze", SMALL_TRACE, "--format", "sarif", "--fail-on", "never", "-o", os.path.join(self.tmp, "r.json"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_python_source_given_to_analyze_is_sent_to_scan_or_run(self):
        script = os.path.join(self.tmp, "train.py")
        with open(script, "w") as f:
            f.write("import torch\nx = torch.zeros(3).cuda()\n")
        r = npud("analyze", script)
        self.assertEqual(r.returncode, 2)
        self.assertIn(f"npu-doctor: hint: {script} is Python source: `npu-doctor scan {script}`", r.stderr)
        self.assertIn(f"`npu-doctor run -- python3 {script}`", r.stderr)

    def test_an_msprobe_dump_given_to_analyze_is_sent_to_compare(self):
        dump = os.path.join(self.tmp, "dump.json")
        with open(dump, "w") as f:
            json.dump({"task": "statistics", "level": "L1", "dump_data_dir": None,
                       "data": {"Tensor.__mul__.7.forward": {"input_args": []}}}, f)
        for path in (dump, self.tmp):   # the file, or the dump's folder
            with self.subTest(path):
                r = npud("analyze", path)
                self.assertEqual(r.returncode, 2)
                self.assertIn("is an msprobe dump: `npu-doctor compare REF_DUMP TARGET_DUMP`", r.stderr)


if __name__ == "__main__":
    unittest.main()
