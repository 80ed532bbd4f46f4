"""Precision and recall of `npu-doctor run` over the corpora: realistic training programs, each
line with a real problem marked before the tool ran on it (docs/corpus.md).

- tests/corpus/: programs written the way GPT, LLaMA, BERT, ResNet, the PyTorch examples and
  pygcn are. Needs precision >= 95 % and recall 100 % under the torch it runs with (ctest runs it
  under both).
- tests/corpus/library/: programs that train models the user did not write (transformers models,
  the Trainer, accelerate), written the way their docs and tutorials are
  (tests/corpus/library/EXPECTED.md holds the ground truth and its reasons). Needs transformers in
  the Python that runs it (tools/test.sh installs tests/corpus/library/requirements.txt into the
  torch 2 venv), skips otherwise; thresholds below.
- tests/corpus/lightning/: programs that train with Lightning (Trainer + DataModule, Fabric,
  lightning.pytorch with torchmetrics), ground truth in its EXPECTED.md, the same way.

A mark is `# expect: ENTRY, ENTRY, ...` on the program's own line: `RULE` one finding of that rule
at that line, `RULE*N` N findings (distinct causes), `RULE[lever]` one finding whose fix must name
`lever` (the setting the user changes), `RULE:torch1` / `RULE:torch2` for one torch major only.
Every finding of `run` (HOT001 aside: hidden by default) is scored against the marks of its
file:line:
  found      one of a mark's expected findings;
  duplicate  a further finding of a rule at a line beyond the count marked;
  false      a finding at a line without that mark;
  missed     an expected finding without one.
Precision = found / (found + duplicates + false); recall = found / marks. A lever mark is
"named" when its finding's fix or notes contain the lever.
`python3 test_corpus.py --table` prints the tables as markdown (docs/corpus.md holds them)."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

from e2e_support import PYTHON, python_has, torch_version

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "corpus"))
LIBRARY = os.path.join(CORPUS, "library")
HELDOUT = os.path.join(CORPUS, "library_heldout")
BINARY = os.environ.get("NPUD_BINARY", "")
HIDDEN = {"HOT001"}
MIN_PRECISION = 0.95
# The library corpus (measured in docs/corpus.md): every mark found, few findings beyond them.
LIBRARY_MIN_PRECISION = 0.80
LIBRARY_MIN_RECALL = 0.90
LIBRARY_MIN_LEVERS = 0.90
# The held-out library corpus (written by another hand, scored once before the fixes it led to;
# docs/corpus.md): a floor at what it measures now, so a regression shows. It counts clipping's
# per-tensor FALLBACK002 note as false (its EXPECTED.md says why).
HELDOUT_MIN_PRECISION = 0.80
HELDOUT_MIN_RECALL = 0.90
HELDOUT_MIN_LEVERS = 0.85

# The Lightning corpus (tests/corpus/lightning, written blind by another hand; docs/corpus.md):
# floors at what it measures now. Its misses are mechanisms still open (issues 41, 45): a
# host-built tensor uploaded per step taken for a constant, torch.nn's own layout copies.
# (11 of 16 marks found, 2 false: its 2 clipping FALLBACK002 marks, found before, went with
# issue 45, which made that multiply no finding.)
LIGHTNING = os.path.join(CORPUS, "lightning")
LIGHTNING_MIN_PRECISION = 0.84
LIGHTNING_MIN_RECALL = 0.68
LIGHTNING_MIN_LEVERS = 0.70

HAVE_TORCH = python_has("torch")
HAVE_TRANSFORMERS = python_has("transformers")
# Found, not imported: `import lightning` takes seconds (it imports torchmetrics and transformers).
HAVE_LIGHTNING = subprocess.run([PYTHON, "-c", "import importlib.util, sys; "
                                 "sys.exit(importlib.util.find_spec('lightning') is None)"],
                                capture_output=True, timeout=120).returncode == 0
ENTRY = re.compile(r"^([A-Z]+\d+)(?:\*(\d+))?(?:\[([^\]]+)\])?(?::(torch\d))?$")


def family(rule):
    return re.sub(r"\d+$", "", rule)


def programs(directory):
    return sorted(f for f in os.listdir(directory) if f.endswith(".py") and not f.startswith("_"))


def expectations(path, major):
    """{(rule, line): [lever or None, ...]} marked in `path` for torch `major`: one list entry
    per expected finding."""
    marks = defaultdict(list)
    with open(path) as f:
        for number, line in enumerate(f, 1):
            m = re.search(r"# expect: (.+)$", line)
            if not m:
                continue
            for item in m.group(1).split(","):
                e = ENTRY.match(item.strip())
                if not e:
                    raise AssertionError("%s:%d: not a mark: %r" % (path, number, item))
                rule, count, lever, only = e.groups()
                if only and only != "torch%d" % major:
                    continue
                marks[(rule, number)] += [lever] * int(count or 1)
    return marks


STEPS = re.compile(r"^# corpus-steps: (\S+)$", re.M)


def run(path):
    """`run --steps 1:3`, or the steps a `# corpus-steps: all` line of the program asks for (a
    program whose start-up must stay quiet too: one-off placements before the loop)."""
    out = tempfile.mkdtemp(prefix="npud-corpus-")
    report = os.path.join(out, "report.json")
    with open(path, encoding="utf-8") as f:
        asked = STEPS.search(f.read())
    cmd = [BINARY, "run", "-q", "--steps", asked.group(1) if asked else "1:3", "--capture-dir", os.path.join(out, "out"), "--format", "json",
           "-o", report, "--fail-on", "never", "--", PYTHON, path]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", TOKENIZERS_PARALLELISM="false")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=os.path.dirname(path), env=env)
    if r.returncode == 2 and "no step was recorded" in r.stderr:
        return []   # nothing to score: every mark of the program is missed
    if r.returncode != 0 or not os.path.exists(report):
        raise AssertionError("%s: rc=%d\n%s" % (path, r.returncode, r.stderr[-3000:]))
    with open(report) as f:
        return [x for x in json.load(f)["findings"] if x["id"] not in HIDDEN]


def new_row():
    return {"expected": 0, "found": 0, "duplicates": 0, "false": 0, "levers": 0, "named": 0}


def score_program(directory, program, findings, major, table, per_program, problems):
    path = os.path.join(directory, program)
    marks = expectations(path, major)
    prog = per_program[program]
    for (rule, _), levers in marks.items():
        for row in (table[family(rule)], prog):
            row["expected"] += len(levers)
            row["levers"] += sum(1 for lever in levers if lever)
    pending = {key: list(levers) for key, levers in marks.items()}
    # Lever marks take the findings that name their lever first, so a count of plain and lever
    # marks at one line is matched the best way.
    def names(f, lever):
        text = (f.get("fix") or "") + " " + " ".join(f.get("notes") or [])
        return lever in text
    ordered = sorted(findings, key=lambda f: 0 if any(
        lever and names(f, lever) for lever in marks.get((f["id"], f.get("location", {}).get("line")), [])) else 1)
    for f in ordered:
        loc = f.get("location", {})
        key = (f["id"], loc.get("line"))
        where = "%s:%s %s" % (program, loc.get("line"), f["id"])
        rows = (table[family(f["id"])], prog)
        if loc.get("file") != path or key not in marks:
            for row in rows:
                row["false"] += 1
            problems.append("false %s: %s" % (where, f["message"][:200]))
            continue
        left = pending[key]
        if not left:
            for row in rows:
                row["duplicates"] += 1
            problems.append("duplicate %s: %s" % (where, f["message"][:200]))
            continue
        lever = next((x for x in left if x and names(f, x)), None)
        if lever is None:
            lever = next((x for x in left if not x), left[0])
        left.remove(lever)
        for row in rows:
            row["found"] += 1
            if lever and names(f, lever):
                row["named"] += 1
        if lever and not names(f, lever):
            problems.append("lever %s: %s not named in the fix: %s" % (where, lever, (f.get("fix") or "")[:200]))
    for (rule, line), left in sorted(pending.items()):
        for lever in left:
            problems.append("missed %s:%d %s%s" % (program, line, rule, "[%s]" % lever if lever else ""))


def score(directory, major, jobs=1):
    """Per-family and per-program counts, and the problems (false, duplicate, missed)."""
    table = defaultdict(new_row)
    per_program = defaultdict(new_row)
    problems = []
    names = programs(directory)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda p: run(os.path.join(directory, p)), names))
    for program, findings in zip(names, results):
        score_program(directory, program, findings, major, table, per_program, problems)
    return dict(table), dict(per_program), problems


def totals(table):
    t = {k: sum(row[k] for row in table.values()) for k in new_row()}
    reported = t["found"] + t["duplicates"] + t["false"]
    t["precision"] = t["found"] / reported if reported else 1.0
    t["recall"] = t["found"] / t["expected"] if t["expected"] else 1.0
    t["lever_share"] = t["named"] / t["levers"] if t["levers"] else 1.0
    return t


def markdown(table, label, levers=False):
    head = "| %s | expected | found | duplicates | false | precision | recall |" % label
    if levers:
        head += " levers named |"
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|" + ("---:|" if levers else "")]

    def line(name, row, bold=False):
        t = totals({name: row})
        cells = [name, str(row["expected"]), str(row["found"]), str(row["duplicates"]), str(row["false"]),
                 "%.0f %%" % (100 * t["precision"]), "%.0f %%" % (100 * t["recall"])]
        if levers:
            cells.append("%d/%d" % (row["named"], row["levers"]))
        if bold:
            cells = ["**%s**" % c for c in cells]
        return "| " + " | ".join(cells) + " |"

    for name in sorted(table):
        lines.append(line(name, table[name]))
    lines.append(line("all", {k: sum(r[k] for r in table.values()) for k in new_row()}, True))
    return "\n".join(lines)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
class CorpusPrecisionRecall(unittest.TestCase):
    def test_precision_and_recall_over_the_corpus(self):
        # Per program too (issue 45): a program that gets one false finding among few is not
        # hidden by the others' totals.
        version = torch_version()
        table, per_program, problems = score(CORPUS, version[0])
        t = totals(table)
        sys.stderr.write("\n" + markdown(table, "family (torch %d.%d)" % version) + "\n")
        sys.stderr.write("\n" + markdown(per_program, "program (torch %d.%d)" % version) + "\n")
        detail = "\n".join(problems)
        self.assertGreaterEqual(t["precision"], MIN_PRECISION, detail)
        self.assertEqual(t["recall"], 1.0, detail)
        for program, row in per_program.items():
            p = totals({program: row})
            self.assertGreaterEqual(p["precision"], MIN_PRECISION, "%s\n%s" % (program, detail))
            self.assertEqual(p["recall"], 1.0, "%s\n%s" % (program, detail))

    @unittest.skipUnless(HAVE_TRANSFORMERS, "transformers is not importable by %s: the library corpus needs "
                                            "tests/corpus/library/requirements.txt (tools/test.sh installs it into "
                                            "the torch 2 venv)" % PYTHON)
    def test_library_corpus(self):
        self.check_library(LIBRARY, LIBRARY_MIN_PRECISION, LIBRARY_MIN_RECALL, LIBRARY_MIN_LEVERS)

    @unittest.skipUnless(HAVE_TRANSFORMERS, "transformers is not importable by %s: the held-out library corpus "
                                            "needs tests/corpus/library/requirements.txt" % PYTHON)
    def test_heldout_library_corpus(self):
        self.check_library(HELDOUT, HELDOUT_MIN_PRECISION, HELDOUT_MIN_RECALL, HELDOUT_MIN_LEVERS)

    @unittest.skipUnless(HAVE_LIGHTNING, "lightning is not importable by %s: the Lightning corpus needs "
                                         "tests/corpus/library/requirements.txt" % PYTHON)
    def test_lightning_corpus(self):
        self.check_library(LIGHTNING, LIGHTNING_MIN_PRECISION, LIGHTNING_MIN_RECALL, LIGHTNING_MIN_LEVERS)

    def check_library(self, directory, min_precision, min_recall, min_levers):
        version = torch_version()
        table, per_program, problems = score(directory, version[0], jobs=2)
        t = totals(table)
        sys.stderr.write("\n" + markdown(per_program, "program", levers=True) + "\n")
        detail = "\n".join(problems)
        self.assertGreaterEqual(t["precision"], min_precision, detail)
        self.assertGreaterEqual(t["recall"], min_recall, detail)
        self.assertGreaterEqual(t["lever_share"], min_levers, detail)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(HAVE_TRANSFORMERS, "transformers is not importable by %s (tests/corpus/library/requirements.txt)"
                     % PYTHON)
class LibraryLevers(unittest.TestCase):
    def test_levers_are_checked_against_the_model_class(self):
        """T5 is not told attn_implementation="flash_attention_2" (its class has
        `_supports_flash_attn = False`: the finding says why not) nor hidden_act (its config
        has none): its GELU's lever is config.dense_act_fn (issue 45)."""
        program = os.path.join(HERE, "programs", "t5_gated_gelu_levers.py")
        findings = run(program)
        by_rule = defaultdict(list)
        for f in findings:
            by_rule[f["id"]].append(f)
        copies = by_rule["CONTIG001"] + by_rule["CONTIG002"]
        self.assertTrue(copies, [f["id"] for f in findings])
        for f in copies:
            self.assertNotIn("flash_attention_2", f["fix"], f)
        self.assertTrue(any("not offered" in n and "T5ForConditionalGeneration" in n
                            for f in copies for n in f["notes"]), copies)
        self.assertEqual(len(by_rule["FUSE006"]), 1, [f["id"] for f in findings])
        self.assertIn("dense_act_fn", by_rule["FUSE006"][0]["fix"])
        self.assertNotIn("hidden_act", by_rule["FUSE006"][0]["fix"])


if __name__ == "__main__" and "--table" in sys.argv:
    v = torch_version()
    for directory, label in ((CORPUS, "corpus"), (LIBRARY, "library corpus"), (HELDOUT, "held-out library corpus"),
                             (LIGHTNING, "Lightning corpus")):
        if directory != CORPUS and not HAVE_TRANSFORMERS or directory == LIGHTNING and not HAVE_LIGHTNING:
            continue
        tab, per_prog, probs = score(directory, v[0], jobs=2)
        print("## %s, torch %d.%d\n" % (label, v[0], v[1]))
        print(markdown(tab, "family", levers=directory != CORPUS) + "\n")
        print(markdown(per_prog, "program", levers=directory != CORPUS) + "\n")
        for p in probs:
            print("- " + p)
        print()
elif __name__ == "__main__":
    unittest.main()
