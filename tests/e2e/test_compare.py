"""End to end: `npu-doctor compare` on real dumps: two `npu-doctor run --dump` runs of a small
program (fp32 vs a planted fp16 cast), plain npy trees written by numpy, hand-made msprobe
directories (tensor task with .npy, and with a legacy-format .pt, refused; torch.save .pt files
are test_compare_pt.py's), and the real msprobe fixtures
in ../shared (skipped with a message when absent).
"""

import functools
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import e2e_support
from e2e_support import PYTHON, python_has

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "compare_programs")
planted_line = functools.partial(e2e_support.planted_line, PROGRAMS)
BINARY = os.environ.get("NPUD_BINARY", "")
from e2e_support import SHARED
MSPROBE = os.path.join(SHARED, "fixtures", "ascend", "msprobe-dump-mix-statistics-pangu", "dump_file")


HAVE_TORCH = python_has("torch")
HAVE_NUMPY = python_has("numpy")


def compare(*args):
    r = subprocess.run([BINARY, "compare", "-q", *args], capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def compare_json(ref, target, *args):
    code, out, err = compare(ref, target, "--format", "json", *args)
    return code, (json.loads(out) if out.strip() else None), err


def numpy_script(text):
    r = subprocess.run([PYTHON, "-c", text], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError(r.stderr)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class CompareEndToEnd(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="npud-compare-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    # --- npu-doctor run --dump ---------------------------------------------------------------
    def run_dump(self, out, plant, select="all"):
        env = dict(os.environ, NPUD_TEST_PLANT="1" if plant else "0")
        r = subprocess.run([BINARY, "run", "-q", "--fail-on", "never", "--steps", "1:2", "--capture-dir", out, "--dump", select,
                            "-o", os.path.join(self.dir, "report.txt"), "--",
                            PYTHON, os.path.join(PROGRAMS, "mlp.py")],
                           capture_output=True, text=True, timeout=300, env=env, cwd=PROGRAMS)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    @unittest.skipUnless(HAVE_TORCH and HAVE_NUMPY, "torch and numpy are not importable by %s" % PYTHON)
    def test_run_dump_names_the_planted_cast(self):
        ref_out = self.run_dump(self.path("ref"), plant=False)
        self.run_dump(self.path("tgt"), plant=True)
        with open(self.path("ref", "dump", "index.jsonl")) as f:
            lines = [json.loads(line) for line in f]
        self.assertEqual(lines[0]["format"], "npu-doctor-dump")
        self.assertTrue(all(os.path.exists(self.path("ref", "dump", e["file"])) for e in lines[1:]))
        self.assertEqual({e["step"] for e in lines[1:]}, {1, 2})   # the recorded steps only

        # Same program twice: no divergence, exit 0.
        self.run_dump(self.path("ref2"), plant=False)
        code, out, err = compare(self.path("ref"), self.path("ref2"))
        self.assertEqual(code, 0, out + err)
        self.assertIn("No divergence", out)

        code, out, err = compare(self.path("ref"), self.path("tgt"))
        self.assertEqual(code, 1, out + err)
        line = planted_line("mlp.py")
        self.assertIn("First divergence: model.block.fc2.forward.0.output.0", out)
        self.assertIn("mlp.py:%d" % line, out)
        code, doc, err = compare_json(self.path("ref"), self.path("tgt"))
        first = doc["first_divergence"]
        self.assertEqual(first["key"], "model.block.fc2.forward.0.output.0")
        self.assertEqual(first["location"]["line"], line)
        self.assertTrue(first["location"]["file"].endswith("mlp.py"))
        self.assertLess(first["metrics"]["cos"], 0.999)
        self.assertEqual(doc["summary"]["only_ref"], 0)

        # Dumping never changes the program's results.
        plain = subprocess.run([PYTHON, os.path.join(PROGRAMS, "mlp.py")], capture_output=True, text=True,
                               timeout=300, env=dict(os.environ, NPUD_TEST_PLANT="0"))
        self.assertEqual(plain.stdout, ref_out)

    @unittest.skipUnless(HAVE_TORCH and HAVE_NUMPY, "torch and numpy are not importable by %s" % PYTHON)
    def test_run_dump_of_aten_ops(self):
        self.run_dump(self.path("ref"), plant=False, select="aten::addmm")
        self.run_dump(self.path("tgt"), plant=True, select="aten::addmm")
        with open(self.path("ref", "dump", "index.jsonl")) as f:
            lines = [json.loads(line) for line in f][1:]
        self.assertTrue(lines)
        self.assertTrue(all(e["kind"] == "op" and e["name"] == "aten::addmm" for e in lines))
        code, doc, err = compare_json(self.path("ref"), self.path("tgt"))
        self.assertEqual(code, 1, err)
        self.assertEqual(doc["first_divergence"]["location"]["line"], planted_line("mlp.py"))

    # --- plain npy trees -----------------------------------------------------------------------
    @unittest.skipUnless(HAVE_NUMPY, "numpy is not importable by %s" % PYTHON)
    def test_npy_trees(self):
        numpy_script("""
import numpy as np, os
d = %r
rng = np.random.default_rng(1)
x = rng.standard_normal((128, 64)).astype(np.float32)
for side in ("ref", "tgt"):
    os.makedirs(os.path.join(d, side, "layer1"), exist_ok=True)
np.save(os.path.join(d, "ref", "layer1", "out.npy"), x)
np.save(os.path.join(d, "tgt", "layer1", "out.npy"), x.astype(np.float16))           # fine: fp16 rounding
np.save(os.path.join(d, "ref", "logits.npy"), x)
y = x.copy(); y[0, 0] = np.inf
np.save(os.path.join(d, "tgt", "logits.npy"), y.astype(">f4"))                          # gained an Inf
np.save(os.path.join(d, "ref", "only_ref.npy"), np.arange(3))
""" % self.dir)
        code, doc, err = compare_json(self.path("ref"), self.path("tgt"), "--all")
        self.assertEqual(code, 1, err)
        self.assertEqual(doc["ref"]["layout"], "npy-tree")
        self.assertEqual(doc["matching"], "key")
        pairs = {p["key"]: p for p in doc["pairs"]}
        self.assertFalse(pairs["layer1/out"]["diverges"])
        self.assertEqual(pairs["layer1/out"]["dtype"], "float16")
        self.assertEqual(pairs["logits"]["metrics"]["inf"], 1)
        self.assertEqual(pairs["logits"]["metrics"]["overflow"], 1)
        self.assertEqual(doc["first_divergence"]["key"], "logits")
        self.assertEqual(doc["only_ref"], ["only_ref"])
        code, out, err = compare(self.path("ref"), self.path("tgt"))
        self.assertIn("gained NaN/Inf", out)

        # A truncated file: exit 2, the file and the byte offset named.
        with open(self.path("tgt", "logits.npy"), "r+b") as f:
            f.truncate(100)
        code, out, err = compare(self.path("ref"), self.path("tgt"))
        self.assertEqual(code, 2)
        self.assertIn("logits.npy: byte", err)

    @unittest.skipUnless(HAVE_NUMPY, "numpy is not importable by %s" % PYTHON)
    def test_what_cosine_cannot_see_diverges(self):
        """Issue 31 F-14, variants: a rescaled scalar and tensor (cos 1), float64 extremes whose
        squares overflow or underflow, an Inf whose sign flipped, a NaN that moved. Each diverges
        and says why; an fp16-rounded copy does not."""
        numpy_script("""
import numpy as np, os
d = %r
for side in ("ref", "tgt"):
    os.makedirs(os.path.join(d, side), exist_ok=True)
def pair(name, r, t):
    np.save(os.path.join(d, "ref", name + ".npy"), r)
    np.save(os.path.join(d, "tgt", name + ".npy"), t)
x = np.random.default_rng(3).standard_normal(4096).astype(np.float32)
pair("loss", np.float32(0.75), np.float32(1.5))
pair("hidden_x1p01", x, x * np.float32(1.01))
pair("f64_huge", np.array([3e307, -2e307, 1e307]), np.array([-3e307, 2e307, -1e307]))
pair("f64_tiny", np.array([0.0, 0.0, 7e-230]), np.array([7e-230, 0.0, 0.0]))
pair("neg_inf", np.array([-np.inf, 1.0, 2.0], np.float32), np.array([np.inf, 1.0, 2.0], np.float32))
pair("nan_moved", np.array([np.nan, 5.0, 6.0]), np.array([5.0, np.nan, 6.0]))
pair("fp16_noise", x, x.astype(np.float16).astype(np.float32))
""" % self.dir)
        code, doc, err = compare_json(self.path("ref"), self.path("tgt"), "--all")
        self.assertEqual(code, 1, err)
        pairs = {p["key"]: p for p in doc["pairs"]}
        self.assertFalse(pairs["fp16_noise"]["diverges"], pairs["fp16_noise"])
        for key in ("loss", "hidden_x1p01", "f64_huge", "f64_tiny", "neg_inf", "nan_moved"):
            self.assertTrue(pairs[key]["diverges"], (key, pairs[key]))
        self.assertIn("norm ratio", pairs["hidden_x1p01"]["reason"])
        self.assertAlmostEqual(pairs["hidden_x1p01"]["metrics"]["norm_ratio"], 1.01, places=5)
        self.assertEqual(pairs["loss"]["metrics"]["norm_ratio"], 2.0)
        self.assertAlmostEqual(pairs["f64_huge"]["metrics"]["cos"], -1.0, places=9)
        self.assertEqual(pairs["f64_tiny"]["metrics"]["cos"], 0.0)
        self.assertEqual(pairs["neg_inf"]["metrics"]["nonfinite_mismatch"], 1)
        self.assertIn("NaN/+Inf/-Inf differ at 2 positions", pairs["nan_moved"]["reason"])
        self.assertEqual(doc["thresholds"]["max_norm_ratio_err"], 0.005)
        code, doc, err = compare_json(self.path("ref"), self.path("tgt"), "--max-norm-ratio-err", "0.05", "--all")
        pairs = {p["key"]: p for p in doc["pairs"]}
        self.assertFalse(pairs["hidden_x1p01"]["diverges"])

    def write_msprobe_stats(self, name, data, prefix=b""):
        root = self.path(name)
        os.makedirs(root, exist_ok=True)
        with open(os.path.join(root, "dump.json"), "wb") as f:
            f.write(prefix + json.dumps({"task": "statistics", "framework": "pytorch", "data": data}).encode())
        return root

    def stats_entry(self, mx):
        return {"output": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [3], "Max": mx, "Min": -1,
                            "Mean": 0.5, "Norm": 2.0}]}

    def test_mindspore_target_with_a_mapping_file(self):
        """Issue 29 §4: a MindSpore statistics dump against a PyTorch one: msprobe's renames
        (Cell./Mint.) and a --mapping YAML (a cell path, one whole entry) pair every entry by key;
        the first divergence is the mapped cell; a bad mapping line is exit 2 with its offset."""
        ref = self.write_msprobe_stats("ref", {"Module.model.layers.0.Linear.forward.0": self.stats_entry(1.0),
                                               "Torch.matmul.0.forward": self.stats_entry(1.0),
                                               "NPU.npu_rms_norm.0.forward": self.stats_entry(1.0)})
        tgt = self.write_msprobe_stats("tgt", {"Cell.net.blocks.0.Dense.forward.0": self.stats_entry(3.0),
                                               "Mint.matmul.0.forward": self.stats_entry(1.0),
                                               "Functional.rms_norm.0.forward": self.stats_entry(1.0)})
        with open(os.path.join(tgt, "dump.json")) as f:
            doc = json.load(f)
        doc["framework"] = "mindspore"
        with open(os.path.join(tgt, "dump.json"), "w") as f:
            json.dump(doc, f)
        mapping = self.path("mapping.yaml")
        with open(mapping, "w") as f:
            f.write("# MindSpore name: PyTorch name\nnet.blocks.0.Dense: model.layers.0.Linear\n"
                    "Functional.rms_norm.0.forward.output.0: NPU.npu_rms_norm.0.forward.output.0\n")
        code, out, err = compare(ref, tgt, "--mapping", mapping)
        self.assertEqual(code, 1, out + err)
        self.assertIn("3 pairs matched by key", out)
        self.assertIn("3 keys renamed before matching (msprobe's MindSpore-to-PyTorch names and", out)
        self.assertIn("First divergence: Module.model.layers.0.Linear.forward.0.output.0  "
                      "(target: Cell.net.blocks.0.Dense.forward.0.output.0)", out)
        code, doc, err = compare_json(ref, tgt, "--mapping", mapping)
        self.assertEqual((doc["matching"], doc["renamed_keys"], doc["summary"]["matched"]), ("key", 3, 3))
        with open(mapping, "a") as f:
            f.write("no colon here\n")
        code, out, err = compare(ref, tgt, "--mapping", mapping)
        self.assertEqual(code, 2, out + err)
        self.assertIn("mapping.yaml", err)
        self.assertIn("byte %d" % (len("# MindSpore name: PyTorch name\nnet.blocks.0.Dense: model.layers.0.Linear\n"
                                       "Functional.rms_norm.0.forward.output.0: NPU.npu_rms_norm.0.forward.output.0\n")),
                      err)

    def test_msprobe_target_with_nothing_comparable_is_exit_2(self):
        """Issue 31 F-18 (variant): every target entry is a list, not an object: no pair was
        compared, which is a broken input (exit 2, as an empty .npy target is), not a pass."""
        ref = self.write_msprobe_stats("ref", {"Module.decoder.norm.forward.0": self.stats_entry(4.0),
                                               "Functional.gelu.2.forward": self.stats_entry(1.0)})
        tgt = self.write_msprobe_stats("tgt", {"Module.decoder.norm.forward.0": [4.0, -1],
                                               "Functional.gelu.2.forward": [1.0]})
        code, out, err = compare(ref, tgt)
        self.assertEqual(code, 2, out + err)
        self.assertIn("Nothing was compared", out)
        self.assertIn("2 entries are not an object", out)
        code, doc, err = compare_json(ref, tgt)
        self.assertEqual(code, 2)
        self.assertEqual(doc["summary"]["compared"], 0)
        code, out, err = compare(ref, ref)
        self.assertEqual(code, 0, out + err)

    def test_msprobe_keys_are_escaped_and_a_bom_is_read(self):
        """Issue 31 F-20 (compare) and the BOM/duplicate-key notes: a key carrying terminal
        escapes is printed escaped (as the single-trace text report does); a dump.json written
        with a UTF-8 BOM reads; a key given twice is named."""
        evil = "Module.\x1b]0;pwned\x07layer\x1b[2J.forward.0"
        ref = self.write_msprobe_stats("ref", {evil: self.stats_entry(1.0)})
        tgt = self.write_msprobe_stats("tgt", {evil: self.stats_entry(9.0)}, prefix=b"\xef\xbb\xbf")
        code, out, err = compare(ref, tgt)
        self.assertEqual(code, 1, out + err)
        self.assertNotIn("\x1b", out)
        self.assertNotIn("\x07", out)
        self.assertIn("\\x1b[2J", out)
        with open(os.path.join(tgt, "dump.json"), "rb") as f:
            text = f.read()
        dup = text[:-2] + b', "Module.x.forward.0": {}, "Module.x.forward.0": {}}}'
        with open(os.path.join(tgt, "dump.json"), "wb") as f:
            f.write(dup)
        code, out, err = compare(ref, tgt)
        self.assertIn('entry "Module.x.forward.0" appears more than once (byte %d)' % dup.rfind(b'"Module.x.forward.0"'),
                      out)

    # --- hand-made msprobe dumps ---------------------------------------------------------------
    def msprobe_dir(self, name, data_names, values):
        root = self.path(name, "step0", "rank0")
        os.makedirs(os.path.join(root, "dump_tensor_data"))
        data = {}
        for i, (dn, v) in enumerate(zip(data_names, values)):
            entry = "Functional.linear.%d.forward" % i
            data[entry] = {"input_args": [], "input_kwargs": {}, "output": [
                {"type": "mindspore.Tensor", "dtype": "Float32", "shape": [4], "Max": max(v), "Min": min(v),
                 "Mean": sum(v) / 4, "Norm": sum(a * a for a in v) ** 0.5, "data_name": dn}]}
            if dn.endswith(".npy"):
                numpy_script("import numpy as np; np.save(%r, np.array(%r, dtype=np.float32))"
                             % (os.path.join(root, "dump_tensor_data", dn), v))
            else:
                with open(os.path.join(root, "dump_tensor_data", dn), "wb") as f:
                    f.write(b"\x80\x02}q\x00.")   # a pickle: must never be loaded
        with open(os.path.join(root, "dump.json"), "w") as f:
            json.dump({"task": "tensor", "level": "L1", "framework": "mindspore", "data": data}, f)
        return self.path(name)

    @unittest.skipUnless(HAVE_NUMPY, "numpy is not importable by %s" % PYTHON)
    def test_msprobe_tensor_task(self):
        names = ["Functional.linear.0.forward.output.0.npy", "Functional.linear.1.forward.output.0.npy"]
        ref = self.msprobe_dir("ref", names, [[1, 2, 3, 4], [1, 1, 1, 1]])
        tgt = self.msprobe_dir("tgt", names, [[1, 2, 3, 4], [1, -1, 1, -1]])
        code, doc, err = compare_json(ref, tgt)
        self.assertEqual(code, 1, err)
        self.assertEqual(doc["ref"]["layout"], "msprobe")
        self.assertEqual(doc["first_divergence"]["key"], "Functional.linear.1.forward.output.0")
        self.assertEqual(doc["first_divergence"]["metrics"]["cos"], 0.0)

        # .pt files are read (test_compare_pt.py); this one is a bare legacy-format pickle.
        pt = self.msprobe_dir("pt", [n.replace(".npy", ".pt") for n in names], [[1, 2, 3, 4], [1, 1, 1, 1]])
        code, out, err = compare(ref, pt)
        self.assertEqual(code, 2)
        self.assertIn("Functional.linear.0.forward.output.0.pt: byte 0: a legacy torch.save file", err)

    # --- the real msprobe fixtures -----------------------------------------------------------
    def test_real_msprobe_fixtures(self):
        if not os.path.isdir(MSPROBE):
            self.skipTest("shared fixtures not found at %s (set NPUD_SHARED_DIR)" % MSPROBE)
        pt, ms = os.path.join(MSPROBE, "pytorch_data"), os.path.join(MSPROBE, "mindspore_data")
        for d in (pt, ms):
            code, out, err = compare(d, d)
            self.assertEqual(code, 0, out + err)
            self.assertIn("Tensors were not dumped", out)
            self.assertIn("No divergence", out)
        code, out, err = compare(pt, ms)
        self.assertIn(code, (0, 1), err)
        self.assertIn("by order within kind and shape", out)
        code, doc, err = compare_json(pt, ms)
        self.assertEqual(doc["matching"], "order")
        self.assertTrue(doc["statistics_only"])
        self.assertEqual(doc["ref"]["framework"], "pytorch")
        self.assertEqual(doc["target"]["framework"], "mindspore")
        self.assertGreater(doc["summary"]["matched"], 10)
        statuses = {p["status"] for p in doc["pairs"]}
        self.assertIn("statistics", statuses)

    def test_bad_input(self):
        code, out, err = compare(self.path("nope"), self.path("nope2"))
        self.assertEqual(code, 2)
        self.assertIn("nope", err)
        os.makedirs(self.path("d", "dump"))
        with open(self.path("d", "dump", "index.jsonl"), "w") as f:
            f.write('{"format":"npu-doctor-dump","version":1}\n')
            f.write('{"key":"k","file":"../../../etc/passwd","shape":[1]}\n')
        code, out, err = compare(self.path("d"), self.path("d"))
        self.assertEqual(code, 2)
        self.assertIn("index.jsonl: byte 41", err)
        self.assertIn("leaves the dump directory", err)


if __name__ == "__main__":
    unittest.main()
