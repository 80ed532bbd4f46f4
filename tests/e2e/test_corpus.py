"""Precision and recall of `npu-doctor run` over the corpus (tests/corpus/): realistic training
programs written the way GPT, LLaMA, BERT, ResNet, the PyTorch examples and pygcn are, each
line with a real problem marked `# expect: RULE[, RULE...]` (a rule may carry `:torch1` or
`:torch2`, the torch major version it applies to). Every finding of `run` (HOT001 aside:
hidden by default) is scored against the marks of its file:line:
  found      a mark's first finding;
  duplicate  a further finding of the same rule at the same line;
  false      a finding at a line without that mark;
  missed     a mark without a finding.
Precision = found / (found + duplicates + false); recall = found / marks. The test needs
precision >= 95 % and recall 100 % under the torch it runs with (ctest runs it under both).
`python3 test_corpus.py --table` prints the table as markdown (docs/corpus.md holds it)."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from collections import defaultdict

from e2e_support import PYTHON, python_has, torch_version

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "corpus"))
BINARY = os.environ.get("NPUD_BINARY", "")
HIDDEN = {"HOT001"}
MIN_PRECISION = 0.95

HAVE_TORCH = python_has("torch")


def family(rule):
    return re.sub(r"\d+$", "", rule)


def programs():
    return sorted(f for f in os.listdir(CORPUS) if f.endswith(".py") and not f.startswith("_"))


def expectations(path, major):
    """{(rule, line)} marked in `path` for torch `major`."""
    marks = set()
    with open(path) as f:
        for number, line in enumerate(f, 1):
            m = re.search(r"# expect: ([A-Z0-9:, a-z]+)", line)
            if not m:
                continue
            for item in m.group(1).split(","):
                rule, _, only = item.strip().partition(":")
                if not only or only == "torch%d" % major:
                    marks.add((rule, number))
    return marks


def run(program):
    out = tempfile.mkdtemp(prefix="npud-corpus-")
    report = os.path.join(out, "report.json")
    cmd = [BINARY, "run", "-q", "--steps", "1:3", "--capture-dir", os.path.join(out, "out"), "--format", "json",
           "-o", report, "--fail-on", "never", "--", PYTHON, os.path.join(CORPUS, program)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=CORPUS)
    if r.returncode == 2 and "no step was recorded" in r.stderr:
        return []   # nothing to score: every mark of the program is missed
    if r.returncode != 0 or not os.path.exists(report):
        raise AssertionError("%s: rc=%d\n%s" % (program, r.returncode, r.stderr[-3000:]))
    with open(report) as f:
        return [x for x in json.load(f)["findings"] if x["id"] not in HIDDEN]


def score(major):
    """Per-program verdicts and per-family counts."""
    table = defaultdict(lambda: {"expected": 0, "found": 0, "duplicates": 0, "false": 0})
    problems = []
    for program in programs():
        path = os.path.join(CORPUS, program)
        marks = expectations(path, major)
        for rule, _ in marks:
            table[family(rule)]["expected"] += 1
        seen = set()
        for f in run(program):
            loc = f.get("location", {})
            key = (f["id"], loc.get("line"))
            row = table[family(f["id"])]
            where = "%s:%s %s" % (program, loc.get("line"), f["id"])
            if loc.get("file") == path and key in marks:
                if key in seen:
                    row["duplicates"] += 1
                    problems.append("duplicate %s: %s" % (where, f["message"][:200]))
                else:
                    seen.add(key)
                    row["found"] += 1
            else:
                row["false"] += 1
                problems.append("false %s: %s" % (where, f["message"][:200]))
        for rule, line in sorted(marks - seen):
            problems.append("missed %s:%d %s" % (program, line, rule))
    return dict(table), problems


def totals(table):
    t = {k: sum(row[k] for row in table.values()) for k in ("expected", "found", "duplicates", "false")}
    reported = t["found"] + t["duplicates"] + t["false"]
    t["precision"] = t["found"] / reported if reported else 1.0
    t["recall"] = t["found"] / t["expected"] if t["expected"] else 1.0
    return t


def markdown(table, version):
    lines = ["| family (torch %s) | expected | found | duplicates | false | precision | recall |" % version,
             "|---|---:|---:|---:|---:|---:|---:|"]
    for fam in sorted(table):
        row = dict(table[fam])
        t = totals({fam: row})
        lines.append("| %s | %d | %d | %d | %d | %.0f %% | %.0f %% |" % (
            fam, row["expected"], row["found"], row["duplicates"], row["false"], 100 * t["precision"],
            100 * t["recall"]))
    t = totals(table)
    lines.append("| **all** | %d | %d | %d | %d | **%.1f %%** | **%.0f %%** |" % (
        t["expected"], t["found"], t["duplicates"], t["false"], 100 * t["precision"], 100 * t["recall"]))
    return "\n".join(lines)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
class CorpusPrecisionRecall(unittest.TestCase):
    def test_precision_and_recall_over_the_corpus(self):
        version = torch_version()
        table, problems = score(version[0])
        t = totals(table)
        sys.stderr.write("\n" + markdown(table, "%d.%d" % version) + "\n")
        detail = "\n".join(problems)
        self.assertGreaterEqual(t["precision"], MIN_PRECISION, detail)
        self.assertEqual(t["recall"], 1.0, detail)


if __name__ == "__main__" and "--table" in sys.argv:
    v = torch_version()
    tab, probs = score(v[0])
    print(markdown(tab, "%d.%d" % v))
    for p in probs:
        print("- " + p)
elif __name__ == "__main__":
    unittest.main()
