"""End to end: `npu-doctor compare` on torch.save .pt files (issue 29, section 4), written at
test time by the torch under test (ctest runs this module with torch 1.13 and with 2.13):
plain trees of .pt files, msprobe-style PyTorch dumps whose dump.json names .pt tensor files,
the values read checked against numpy's own .npy copies, and hostile .pt files (a pickle that
calls os.system or builtins.eval) refused with exit 2 before anything runs.
"""

import os
import shutil
import struct
import subprocess
import tempfile
import unittest
import zipfile

from e2e_support import PYTHON, python_has
from test_compare import BINARY, compare, compare_json   # functions only: no TestCase is imported

HAVE_TORCH = python_has("torch")
HAVE_NUMPY = python_has("numpy")
# Debian's torch 1.13, for dumps written by one torch and compared with another's.
SYSTEM_PYTHON = "/usr/bin/python3"


def run_python(text, python=PYTHON):
    r = subprocess.run([python, "-c", text], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(r.stderr)
    return r.stdout


def torch_of(python):
    r = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True,
                       timeout=120)
    return r.stdout.strip() if r.returncode == 0 else None


# Writes, under the directory `d`, a tensor set for side `side` ("ref" or "tgt"): every dtype
# compare reads, views (transposed, sliced, expanded), a state_dict with a Parameter, and the
# target's planted problems. With npy=True, also numpy's copy of every tensor under d/npy-<side>.
TREE_SCRIPT = r"""
import os, sys, collections, torch
d, side, npy = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
g = torch.Generator().manual_seed(7)
x = torch.randn(256, 64, generator=g)
tgt = side == "tgt"
tensors = {
    "a_fine.pt": x.half() if tgt else x,                       # fp16 rounding: no divergence
    "b_rescaled.pt": x * 1.01 if tgt else x,                   # cos 1.0: the norm ratio catches it
    "c_nan.pt": torch.where(x > 2.5, torch.tensor(float("nan")), x) if tgt else x,
    "views/transposed.pt": x.t(),
    "views/sliced.pt": x[10:20, 5:],
    "views/expanded.pt": torch.arange(4.0).reshape(4, 1).expand(4, 6),
    "dtypes/bf16.pt": x.bfloat16(),
    "dtypes/f64.pt": x.double(),
    "dtypes/i64.pt": torch.arange(-5, 5),
    "dtypes/i32.pt": torch.arange(7, dtype=torch.int32),
    "dtypes/u8.pt": torch.arange(250, 256, dtype=torch.uint8),
    "dtypes/bool.pt": x[0] > 0,
    "dtypes/scalar.pt": torch.tensor(0.75),
    "dtypes/empty.pt": torch.empty(0, 3),
}
state = collections.OrderedDict()
state["fc.weight"] = torch.nn.Parameter(x[:8].clone())
state["fc.bias"] = x[0, :8].clone()
state["fc.weight_t"] = x[:8].t()
state["step"] = 3                                             # not a tensor: not compared
tensors["model.pt"] = state
for rel, t in tensors.items():
    path = os.path.join(d, side, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(t, path)
    if not npy:
        continue
    items = t.items() if isinstance(t, dict) else [("", t)]
    for name, v in items:
        if not torch.is_tensor(v):
            continue
        v = v.detach()
        if v.dtype == torch.bfloat16:
            v = v.float()                                     # numpy has no bfloat16
        base = rel[:-3] + ("/" + name if name else "")
        npath = os.path.join(d, "npy-" + side, base + ".npy")
        os.makedirs(os.path.dirname(npath), exist_ok=True)
        import numpy as np
        np.save(npath, v.contiguous().numpy())   # C order, as the .pt reader gives views
"""

# An msprobe PyTorch tensor dump (the layout mindstudio-probe 26.2.0 writes: dump.json under
# step0/rank0, one torch.save file per tensor under dump_tensor_data/, named
# <entry>.<input|output>.<index>.pt, each a contiguous detached clone). With "npu", each
# tensor is pickled as torch_npu pickles a tensor that lives on an NPU (msprobe clones on the
# device): Tensor.__reduce_ex__ returns torch_npu.utils.storage._rebuild_npu_tensor with the
# CPU copy's storage and the NPU format, a torch_npu.npu._format.Format. Stand-ins for those
# two torch_npu names are written to a folder on sys.path, so the file holds exactly the
# GLOBALs an Ascend machine writes.
FAKE_TORCH_NPU = {
    "torch_npu/__init__.py": "",
    "torch_npu/utils/__init__.py": "",
    "torch_npu/utils/storage.py": "import torch\n"
                                  "def _rebuild_npu_tensor(storage, offset, size, stride, grad, hooks, fmt):\n"
                                  "    return torch._utils._rebuild_tensor_v2(storage, offset, size, stride, grad, hooks)\n",
    "torch_npu/npu/__init__.py": "",
    "torch_npu/npu/_format.py": "import enum\nclass Format(enum.IntEnum):\n    ND = 2\n",
}
MSPROBE_SCRIPT = r"""
import collections, json, os, sys, torch
root, scale, npu = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "npu"
if npu:
    sys.path.insert(0, sys.argv[4])
    from torch_npu.utils.storage import _rebuild_npu_tensor
    from torch_npu.npu._format import Format
    def _reduce_ex(self, proto):
        t = self.cpu()
        return _rebuild_npu_tensor, (t.storage(), t.storage_offset(), tuple(t.size()), t.stride(), t.requires_grad,
                                     collections.OrderedDict(), Format.ND)
    torch.Tensor.__reduce_ex__ = _reduce_ex
rank = os.path.join(root, "step0", "rank0")
os.makedirs(os.path.join(rank, "dump_tensor_data"), exist_ok=True)
g = torch.Generator().manual_seed(3)
x = torch.randn(16, 32, generator=g)
w = torch.randn(32, 32, generator=g)
h = x @ w
ops = [("Functional.linear.0.forward", [x, w], h),
       ("Functional.gelu.1.forward", [h], torch.nn.functional.gelu(h) * scale),
       ("Tensor.__add__.2.forward", [h.bfloat16()], (h * scale).bfloat16() + 1)]
data = {}
def entry(name, io, i, t):
    t = t.clone().contiguous().detach()
    file = "%s.%s.%d.pt" % (name, io, i)
    torch.save(t, os.path.join(rank, "dump_tensor_data", file))
    f = t.float()
    return {"type": "torch.Tensor", "dtype": str(t.dtype), "shape": list(t.shape), "Max": f.max().item(),
            "Min": f.min().item(), "Mean": f.mean().item(), "Norm": f.norm().item(), "requires_grad": False,
            "data_name": file}
for name, inputs, out in ops:
    data[name] = {"input_args": [entry(name, "input", i, t) for i, t in enumerate(inputs)], "input_kwargs": {},
                  "output": [entry(name, "output", 0, out)]}
with open(os.path.join(rank, "dump.json"), "w") as f:
    json.dump({"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": None, "data": data}, f)
"""


def hostile_pt(path, module, name, argument):
    """A zip laid out as torch.save's, whose data.pkl calls module.name(argument) through
    GLOBAL + REDUCE (what a malicious .pt does on torch.load). Returns the file byte of the
    GLOBAL opcode."""
    arg = argument.encode()
    pkl = (b"\x80\x02" + b"c" + module.encode() + b"\n" + name.encode() + b"\n" +
           b"X" + struct.pack("<I", len(arg)) + arg + b"\x85R.")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("archive/data.pkl")
    with open(path, "rb") as f:
        f.seek(info.header_offset + 26)
        name_len, extra_len = struct.unpack("<HH", f.read(4))
    return info.header_offset + 30 + name_len + extra_len + 2   # after PROTO 2


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class ComparePtEndToEnd(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="npud-compare-pt-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def write_tree(self, side, npy=False, python=PYTHON):
        script = self.path("tree.py")
        with open(script, "w") as f:
            f.write(TREE_SCRIPT)
        r = subprocess.run([python, script, self.dir, side, "1" if npy else "0"], capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)

    @unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
    def test_pt_trees_name_the_first_divergence(self):
        self.write_tree("ref")
        self.write_tree("tgt")
        code, doc, err = compare_json(self.path("ref"), self.path("tgt"), "--all")
        self.assertEqual(code, 1, err)
        self.assertEqual(doc["ref"]["layout"], "pt-tree")
        self.assertEqual(doc["matching"], "key")
        pairs = {p["key"]: p for p in doc["pairs"]}
        self.assertFalse(pairs["a_fine"]["diverges"], pairs["a_fine"])
        self.assertEqual((pairs["a_fine"]["dtype_ref"], pairs["a_fine"]["dtype"]), ("float32", "float16"))
        # x1.01: cos stays 1, the norm ratio says 1.01.
        rescaled = pairs["b_rescaled"]
        self.assertTrue(rescaled["diverges"])
        self.assertGreater(rescaled["metrics"]["cos"], 0.99999)
        self.assertAlmostEqual(rescaled["metrics"]["norm_ratio"], 1.01, places=5)
        self.assertIn("norm ratio", rescaled["reason"])
        self.assertEqual(doc["first_divergence"]["key"], "b_rescaled")
        self.assertGreater(pairs["c_nan"]["metrics"]["nan"], 0)
        # A state_dict: one entry per tensor, the non-tensor value left out.
        for key in ("model/fc.weight", "model/fc.bias", "model/fc.weight_t"):
            self.assertIn(key, pairs)
            self.assertEqual(pairs[key]["metrics"]["max_abs"], 0.0)
        self.assertEqual(pairs["model/fc.weight_t"]["shape"], [64, 8])
        self.assertNotIn("model/step", pairs)
        code, out, err = compare(self.path("ref"), self.path("tgt"))
        self.assertIn("First divergence: b_rescaled", out)

    @unittest.skipUnless(HAVE_TORCH and HAVE_NUMPY, "torch and numpy are not importable by %s" % PYTHON)
    def test_values_read_are_numpys(self):
        """Every tensor of the .pt tree (views gathered, every dtype) equals numpy's .npy copy
        element for element: max_abs 0 and no divergence, across the two file formats."""
        self.write_tree("ref", npy=True)
        code, doc, err = compare_json(self.path("ref"), self.path("npy-ref"), "--all")
        self.assertEqual(code, 0, err)
        self.assertEqual(doc["target"]["layout"], "npy-tree")
        self.assertEqual(doc["summary"]["only_ref"], 0)
        self.assertEqual(doc["summary"]["only_target"], 0)
        pairs = {p["key"]: p for p in doc["pairs"]}
        self.assertEqual(len(pairs), 17)
        for key, p in pairs.items():
            self.assertEqual(p["status"], "compared", key)
            self.assertEqual(p["metrics"]["max_abs"], 0.0, (key, p["metrics"]))
        self.assertEqual((pairs["dtypes/bf16"]["dtype_ref"], pairs["dtypes/bf16"]["dtype"]), ("bfloat16", "float32"))
        self.assertEqual(pairs["views/expanded"]["shape"], [4, 6])

    @unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
    def test_dumps_of_two_torch_versions(self):
        other = SYSTEM_PYTHON if os.path.realpath(PYTHON) != os.path.realpath(SYSTEM_PYTHON) else None
        if not other or not torch_of(other) or torch_of(other) == torch_of(PYTHON):
            self.skipTest("no second torch (Debian's %s) beside %s" % (SYSTEM_PYTHON, PYTHON))
        self.write_tree("ref", python=other)
        self.write_tree("tgt")
        code, doc, err = compare_json(self.path("ref"), self.path("tgt"), "--all")
        self.assertEqual(code, 1, err)
        self.assertEqual(doc["first_divergence"]["key"], "b_rescaled")
        self.assertEqual({p["key"]: p for p in doc["pairs"]}["views/transposed"]["metrics"]["max_abs"], 0.0)

    def msprobe_dump(self, name, scale, npu=False):
        script = self.path("msprobe.py")
        with open(script, "w") as f:
            f.write(MSPROBE_SCRIPT)
        fake = self.path("fake_torch_npu")
        for rel, text in FAKE_TORCH_NPU.items():
            os.makedirs(os.path.dirname(os.path.join(fake, rel)), exist_ok=True)
            with open(os.path.join(fake, rel), "w") as f:
                f.write(text)
        r = subprocess.run([PYTHON, script, self.path(name), str(scale), "npu" if npu else "cpu", fake],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return self.path(name)

    @unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
    def test_msprobe_pytorch_dumps(self):
        ref = self.msprobe_dump("ref", 1.0)
        same = self.msprobe_dump("same", 1.0)
        tgt = self.msprobe_dump("tgt", 1.01)
        code, out, err = compare(ref, same)
        self.assertEqual(code, 0, out + err)
        self.assertIn("No divergence", out)
        code, doc, err = compare_json(ref, tgt, "--all")
        self.assertEqual(code, 1, err)
        self.assertEqual(doc["ref"]["layout"], "msprobe")
        self.assertEqual(doc["ref"]["framework"], "pytorch")
        first = doc["first_divergence"]
        self.assertEqual(first["key"], "Functional.gelu.1.forward.output.0")
        self.assertIn("norm ratio", first["reason"])
        pairs = {p["key"]: p for p in doc["pairs"]}
        self.assertEqual(pairs["Functional.linear.0.forward.input.1"]["status"], "compared")
        self.assertEqual(pairs["Tensor.__add__.2.forward.input.0"]["dtype"], "bfloat16")
        self.assertTrue(pairs["Tensor.__add__.2.forward.output.0"]["diverges"])

        # Saved on an NPU (torch_npu's pickle of a device tensor): the same values are read.
        npu = self.msprobe_dump("npu", 1.01, npu=True)
        with open(os.path.join(npu, "step0", "rank0", "dump_tensor_data", "Functional.gelu.1.forward.output.0.pt"),
                  "rb") as f:
            self.assertIn(b"torch_npu.utils.storage\n_rebuild_npu_tensor", f.read())
        code, doc, err = compare_json(tgt, npu, "--all")
        self.assertEqual(code, 0, err)
        self.assertTrue(all(p["metrics"]["max_abs"] == 0.0 for p in doc["pairs"]), doc["pairs"])
        code, doc, err = compare_json(ref, npu)
        self.assertEqual(doc["first_divergence"]["key"], "Functional.gelu.1.forward.output.0")

    @unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
    def test_complex_and_float8_are_not_comparable(self):
        """Read (bounds checked) and reported as not comparable, not refused: the rest of the
        dump is still compared."""
        for side in ("ref", "tgt"):
            run_python("import torch, os\n"
                       "d = %r\n"
                       "os.makedirs(d)\n"
                       "torch.save(torch.arange(6.0), os.path.join(d, 'a.pt'))\n"
                       "torch.save(torch.arange(6.0).to(torch.complex64), os.path.join(d, 'c64.pt'))\n"
                       "if hasattr(torch, 'float8_e4m3fn'):\n"
                       "    torch.save(torch.arange(6.0).to(torch.float8_e4m3fn), os.path.join(d, 'f8.pt'))\n"
                       % self.path(side))
        code, doc, err = compare_json(self.path("ref"), self.path("tgt"), "--all")
        self.assertEqual(code, 0, err)
        pairs = {p["key"]: p for p in doc["pairs"]}
        self.assertEqual(pairs["a"]["status"], "compared")
        self.assertEqual(pairs["c64"]["status"], "not_comparable")
        self.assertIn("complex64 tensor", pairs["c64"]["reason"])
        self.assertEqual(pairs["c64"]["dtype"], "complex64")
        if "f8" in pairs:
            self.assertEqual(pairs["f8"]["status"], "not_comparable")

    # --- refused files -------------------------------------------------------------------
    def assert_refused(self, code, err, file, offset, marker):
        self.assertEqual(code, 2, err)
        self.assertIn("%s: byte %d:" % (file, offset), err)
        self.assertIn("nothing in it was run", err)
        self.assertFalse(os.path.exists(marker), "the payload ran")

    def test_hostile_pt_in_a_tree_runs_nothing(self):
        marker = self.path("PWNED")
        for side in ("ref", "tgt"):
            os.makedirs(self.path(side))
        at = hostile_pt(self.path("tgt", "x.pt"), "os", "system", "touch " + marker)
        hostile_pt(self.path("ref", "x.pt"), "builtins", "eval", "open(%r, 'w').write('x')" % marker)
        code, out, err = compare(self.path("ref"), self.path("tgt"))
        self.assertIn("GLOBAL 'builtins eval'", err)
        self.assert_refused(code, err, self.path("ref", "x.pt"), at, marker)
        shutil.copy(self.path("tgt", "x.pt"), self.path("ref", "x.pt"))
        code, out, err = compare(self.path("ref"), self.path("ref"))
        self.assertIn("GLOBAL 'os system'", err)
        self.assert_refused(code, err, self.path("ref", "x.pt"), at, marker)

    @unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
    def test_hostile_pt_in_an_msprobe_dump_runs_nothing(self):
        ref = self.msprobe_dump("ref", 1.0)
        tgt = self.msprobe_dump("tgt", 1.0)
        marker = self.path("PWNED")
        victim = os.path.join(tgt, "step0", "rank0", "dump_tensor_data", "Functional.gelu.1.forward.output.0.pt")
        at = hostile_pt(victim, "posix", "system", "touch " + marker)
        code, out, err = compare(ref, tgt)
        self.assertIn("GLOBAL 'posix system'", err)
        self.assert_refused(code, err, os.path.realpath(victim), at, marker)

    @unittest.skipUnless(HAVE_TORCH, "torch is not importable by %s" % PYTHON)
    def test_legacy_format_is_refused(self):
        for side in ("ref", "tgt"):
            os.makedirs(self.path(side))
        run_python("import torch; torch.save(torch.ones(3), %r, _use_new_zipfile_serialization=False)"
                   % self.path("ref", "x.pt"))
        run_python("import torch; torch.save(torch.ones(3), %r)" % self.path("tgt", "x.pt"))
        code, out, err = compare(self.path("ref"), self.path("tgt"))
        self.assertEqual(code, 2, out + err)
        self.assertIn("x.pt: byte 0: a legacy torch.save file", err)


if __name__ == "__main__":
    unittest.main()
