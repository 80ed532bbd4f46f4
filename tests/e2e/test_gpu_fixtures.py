"""What a real accelerator produced, checked on the CPU: the profiler traces and npu-doctor
captures of nanoGPT and a transformers Llama loop recorded on one H200 with torch 2.11
(../shared/fixtures/gpu-h200/, SOURCE.md there says how each was made and what it showed).

Each test is one thing only a device showed: backward ops on the autograd engine's device
thread (the amp-check captures end in the shim's error there), device SDPA kernels measured
against themselves, torch >= 2.4 dispatch of the foreach ops, and aten::item calls on CPU
tensors inside a GPU profile. Needs ../shared (skips with a message without it).
"""

import json
import os
import subprocess
import unittest

BINARY = os.environ.get("NPUD_BINARY", "")
from e2e_support import SHARED
GPU = os.path.join(SHARED, "fixtures", "gpu-h200")
VIEWS_AND_KERNELS = ("aten::view", "aten::transpose.int", "aten::detach", "aten::_unsafe_view", "aten::t",
                     "aten::empty_like", "aten::_scaled_dot_product_cudnn_attention")


def analyze(name, *args):
    r = subprocess.run([BINARY, "analyze", os.path.join(GPU, name), "--format", "json", "--fail-on", "never", *args],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(r.stderr)
    return json.loads(r.stdout)


def findings(report, rule):
    return [f for f in report["findings"] if f["id"] == rule]


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
@unittest.skipUnless(os.path.isdir(GPU), "no ../shared/fixtures/gpu-h200 beside the checkout: the GPU fixtures "
                                         "are not available here")
class GpuFixtures(unittest.TestCase):
    def test_amp_check_stopped_on_the_device_thread_says_so_first(self):
        for name in ("nanogpt-amp-bf16.npud.json.gz", "hf-llama-loop-amp-fp16.npud.json.gz"):
            with self.subTest(name):
                report = analyze(name)
                first = report["findings"][0]
                self.assertEqual(first["id"], "CAPTURE001")
                self.assertEqual(first["severity"], "error")
                self.assertIn("'NoneType' object has no attribute 'f_code'", first["message"])

    def test_no_amp_finding_on_views_or_device_attention_kernels(self):
        # The old shim measured the cudnn SDPA kernel against itself in fp32 (cos 0.0009) and
        # views against rounded copies of their input ("underflow" for aten::view).
        for name in ("nanogpt-amp-bf16.npud.json.gz", "hf-llama-loop-amp-fp16.npud.json.gz"):
            with self.subTest(name):
                report = analyze(name)
                amp = [f for f in report["findings"] if f["id"].startswith("AMP00")]
                self.assertEqual([f for f in amp if f["location"].get("op") in VIEWS_AND_KERNELS], [], amp)
                # drift after an unmeasurable kernel is the broken shadow's, not the model's
                self.assertEqual(findings(report, "AMP001"), [])

    def test_foreach_ops_are_not_cpu_fallbacks_on_torch_2_11(self):
        # AdamW's and clip_grad_norm_'s foreach ops have a generic kernel on torch >= 2.4: one NPU
        # op per tensor where torch_npu lacks the overload, never a CPU fallback. Nothing breaks
        # and no setting removes it: no finding (issue 45; unit test Fallback002.ForeachOverload...
        # keeps the torch 2.1 case, a backend fallback, a finding).
        for name in ("nanogpt-run.npud.json.gz", "hf-llama-loop-run.npud.json.gz"):
            with self.subTest(name):
                report = analyze(name)
                foreach = [f for f in findings(report, "FALLBACK002") if "_foreach_" in f["location"]["op"]]
                self.assertEqual(foreach, [])
                ops = [f for f in report["findings"] if "_foreach_" in (f["location"].get("op") or "")]
                self.assertEqual([f["id"] for f in ops if f["id"] != "HOT001"], [])

    def test_items_on_cpu_tensors_are_not_syncs(self):
        # nanoGPT's get_batch indexes a numpy memmap with a CPU index tensor: 64 aten::item per
        # step with no CUDA call inside. The one real sync per step is loss.item().
        report = analyze("nanogpt-bf16-profiler.json.gz", "--select", "SYNC001")
        items = [f for f in findings(report, "SYNC001") if f["location"]["op"] == "aten::item"]
        self.assertEqual([f["metrics"]["count"] for f in items], [3], items)

    def test_trace_syncs_at_the_frame_the_trace_names(self):
        # Issue 40: Kineto names the running `<module>` frame at the line where the profiler
        # started (train.py:311, the optimizer step whose post-hook steps the profiler; the
        # capture below knows loss.item()'s own line, 323). The finding is there, marked
        # `enclosing`, so code scanning shows it and a suppression comment reaches it.
        report = analyze("nanogpt-bf16-profiler.json.gz", "--select", "SYNC001")
        items = [f["location"] for f in findings(report, "SYNC001") if f["location"]["op"] == "aten::item"]
        self.assertEqual([(l["file"], l["line"], l.get("enclosing")) for l in items], [("train.py", 311, True)])

    def test_trace_findings_in_transformers_name_the_library_site(self):
        # Kineto's python_function events of an installed package give the library site, and
        # the program's frame above them the file:line, as `run` does. The loop's enclosing
        # line groups nothing: distinct ops and sites stay distinct findings.
        report = analyze("hf-llama-loop-profiler.json.gz")
        sites = {(f["id"], f["location"]["op"], f["location"]["library"]["file"], f["location"]["library"]["function"])
                 for f in report["findings"] if f["location"].get("library")}
        self.assertIn(("CONTIG002", "aten::cat", "models/llama/modeling_llama.py", "rotate_half"), sites)
        self.assertIn(("SYNC001", "aten::is_nonzero", "masking_utils.py", "_ignore_causal_mask_sdpa"), sites)
        for f in report["findings"]:
            if f["location"].get("library"):
                self.assertEqual((f["location"]["file"], f["location"]["line"]), ("hf_llama_loop.py", 22), f)
                self.assertEqual(f["location"]["library"]["package"], "transformers")
        syncs = {f["location"]["op"] for f in findings(report, "SYNC001")}
        self.assertLessEqual({"aten::is_nonzero", "aten::item"}, syncs)
        identities = [(f["id"], f["location"]["file"], f["location"]["line"], f["location"]["op"],
                       json.dumps(f["location"].get("library"), sort_keys=True)) for f in report["findings"]]
        self.assertEqual(len(identities), len(set(identities)))

    def test_capture_syncs_at_the_users_lines(self):
        report = analyze("nanogpt-run.npud.json.gz", "--select", "SYNC001")
        lines = {(os.path.basename(f["location"]["file"]), f["location"]["line"]) for f in findings(report, "SYNC001")}
        self.assertEqual(lines, {("train.py", 323)})


if __name__ == "__main__":
    unittest.main()
