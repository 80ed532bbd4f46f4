"""Capture overhead on the demo model: step time captured / plain, measured in one process.

    /usr/bin/python3 bench/capture/bench_capture.py [--rounds 4] [--steps 5] [--fixed]

Alternates blocks of plain and captured steps (after warm-up) so both see the same machine
state, and reports the median step time of each and their ratio. The sequence length is
fixed at 32 so every step does the same work. No tensor statistics are recorded.
"""
import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

import npu_doctor  # noqa: E402


def load_example():
    path = os.path.join(ROOT, "examples", "tiny_gpt", "train.py")
    spec = importlib.util.spec_from_file_location("tiny_gpt_train", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=5, help="steps per block")
    ap.add_argument("--fixed", action="store_true", help="bench the fixed variant of the example")
    args = ap.parse_args()

    ex = load_example()
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = ex.TinyGPT(fixed=args.fixed)
    opt = ex.make_optimizer(model, args.fixed)
    special = torch.tensor(ex.SPECIAL_TOKENS)
    loss_fn = ex.loss_fixed if args.fixed else ex.loss_planted

    def one_step():
        inputs, targets = ex.batch(gen, 32)
        t0 = time.perf_counter()
        loss = loss_fn(model(inputs), targets, special)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if not args.fixed:
            loss.item()
        return time.perf_counter() - t0

    for _ in range(3):
        one_step()   # warm-up
    plain, captured = [], []
    out_dir = tempfile.mkdtemp(prefix="npud-bench-")
    events = 0
    for r in range(args.rounds):
        plain += [one_step() for _ in range(args.steps)]
        path = os.path.join(out_dir, "round%d.npud.json" % r)
        with npu_doctor.capture(path, steps=None):
            captured += [one_step() for _ in range(args.steps)]
        with open(path) as f:
            events += sum(1 for _ in f) - 3
    p, c = statistics.median(plain), statistics.median(captured)
    print("variant        %s" % ("fixed" if args.fixed else "planted"))
    print("torch          %s, %d threads" % (torch.__version__, torch.get_num_threads()))
    print("steps          %d plain, %d captured (%d rounds)" % (len(plain), len(captured), args.rounds))
    print("events/step    %.0f" % (events / max(1, len(captured))))
    print("median step    plain %.2f ms, captured %.2f ms" % (p * 1e3, c * 1e3))
    print("ratio          %.2fx (captured / plain)" % (c / p))


if __name__ == "__main__":
    main()
