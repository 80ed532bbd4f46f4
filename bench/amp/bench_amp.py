"""amp-check shadow-run overhead on the demo model: wall time of plain runs vs amp mode.

    /usr/bin/python3 bench/amp/bench_amp.py [--rounds 3] [--steps 6] [--dtype fp16] [--level O1]

Two measures, both in the same run on the same machine:
  - whole program: examples/tiny_gpt/train.py run as a subprocess, plain and with the shim in
    amp mode through the environment (NPUD_CAPTURE, NPUD_STEPS=all, NPUD_AMP...), rounds
    alternated; median wall time of each, ratio amp / plain (includes Python/torch start-up);
  - per step: the same model in this process, blocks of plain and amp-mode steps alternated
    (after warm-up, sequence length fixed at 32); median step time, ratio.
"""
import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.path.join(ROOT, "python")
TRAIN = os.path.join(ROOT, "examples", "tiny_gpt", "train.py")
sys.path.insert(0, PYDIR)

import torch  # noqa: E402

from npu_doctor._amp import AmpConfig, AmpSession  # noqa: E402
from npu_doctor._recorder import Recorder  # noqa: E402


def whole_program(rounds, steps, dtype, level):
    out = tempfile.mkdtemp(prefix="npud-bench-amp-")
    amp_env = dict(os.environ, PYTHONPATH=os.path.join(PYDIR, "npu_doctor", "_bootstrap") + os.pathsep + PYDIR,
                   NPUD_CAPTURE=os.path.join(out, "capture.npud.json"), NPUD_STEPS="all",
                   NPUD_AMP=dtype, NPUD_AMP_LEVEL=level, NPUD_AMP_EMULATE="1")
    plain_env = {k: v for k, v in os.environ.items() if not k.startswith("NPUD_")}
    plain, amp = [], []
    cmd = [sys.executable, TRAIN, "--steps", str(steps)]
    for _ in range(rounds):
        for env, times in ((plain_env, plain), (amp_env, amp)):
            t0 = time.perf_counter()
            subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t0)
    size = os.path.getsize(os.path.join(out, "capture.npud.json"))
    return statistics.median(plain), statistics.median(amp), size


def per_step(rounds, steps, dtype, level):
    spec = importlib.util.spec_from_file_location("tiny_gpt_train", TRAIN)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = ex.TinyGPT()
    opt = ex.make_optimizer(model, False)
    special = torch.tensor(ex.SPECIAL_TOKENS)

    def one_step():
        inputs, targets = ex.batch(gen, 32)
        t0 = time.perf_counter()
        loss = ex.loss_planted(model(inputs), targets, special)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss.item()
        return time.perf_counter() - t0

    for _ in range(3):
        one_step()
    plain, amp = [], []
    out = tempfile.mkdtemp(prefix="npud-bench-amp-")
    for r in range(rounds):
        plain += [one_step() for _ in range(steps)]
        rec = Recorder(os.path.join(out, "round%d.npud.json" % r), None)
        rec.amp = AmpSession(AmpConfig(dtype, level, True))
        rec.amp.attach(rec)
        rec.start()
        amp += [one_step() for _ in range(steps)]
        rec.finish("stopped")
    return statistics.median(plain), statistics.median(amp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--dtype", default="fp16")
    ap.add_argument("--level", default="O1")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    p, a, size = whole_program(args.rounds, args.steps, args.dtype, args.level)
    sp, sa = per_step(args.rounds, args.steps, args.dtype, args.level)
    print("torch          %s, %d threads, %d CPUs, load average %.1f -> %.1f"
          % (torch.__version__, torch.get_num_threads(), os.cpu_count(), load, os.getloadavg()[0]))
    print("amp            %s %s, emulated, every step shadowed" % (args.dtype, args.level))
    print("whole program  plain %.2f s, amp %.2f s, ratio %.2fx (%d steps, median of %d; capture %.1f MB)"
          % (p, a, a / p, args.steps, args.rounds, size / 1e6))
    print("median step    plain %.1f ms, amp %.1f ms, ratio %.2fx" % (sp * 1e3, sa * 1e3, sa / sp))


if __name__ == "__main__":
    main()
