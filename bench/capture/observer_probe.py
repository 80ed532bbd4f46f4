"""What recording through torch's own RecordFunction observer (the profiler's C++ hooks) costs,
against the capture's TorchDispatchMode, on the same model and steps: the measurement behind
bench/README.md "Observer or dispatch mode".

    python bench/capture/observer_probe.py [--model gpt] [--rounds 5]

Main-thread CPU time per step (time.thread_time; one intra-op thread, so the op's own compute
is on that thread too), medians of interleaved blocks of 3 steps:
  plain        the program alone
  empty mode   a TorchDispatchMode that only calls the op: the floor of any dispatch-mode capture
  capture      npu_doctor.capture (this checkout's shim)
  observer     torch.profiler with record_shapes, with_stack, profile_memory and with_modules (what
               tensor ids, user stacks and modules would need), then its event tree walked for
               every op's input tensor ids once the profiler stops (collection, not export)
The observer's per-step ratio and its stop + walk time are printed; what it lacks for the rules
(output tensors, string arguments) is listed in the README.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
sys.path.insert(0, HERE)

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import models  # noqa: E402
import npu_doctor  # noqa: E402


class EmptyMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class CountMode(TorchDispatchMode):
    ops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        CountMode.ops += 1
        return func(*args, **(kwargs or {}))


def walk_tree(result):
    """Every TorchOp of the profiler's event tree and its input tensors' ids: what a capture
    built on the observer would have to read."""
    ops = tensors = 0
    ids = set()
    stack = list(result.experimental_event_tree())
    torch_op = torch._C._profiler._EventType.TorchOp
    meta = torch._C._profiler._TensorMetadata
    while stack:
        e = stack.pop()
        stack.extend(e.children)
        if e.tag == torch_op:
            ops += 1
            for i in e.extra_fields.inputs:
                if isinstance(i, meta):
                    tensors += 1
                    ids.add(i.id)
    return ops, tensors, len(ids)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="gpt")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    _, step = models.make(args.model)
    for _ in range(3):
        step()
    with CountMode():
        step()
    clock = time.thread_time

    def block(k=3):
        times = []
        for _ in range(k):
            t0 = clock()
            step()
            times.append(clock() - t0)
        return times

    out = tempfile.mkdtemp(prefix="npud-observer-")
    res = {m: [] for m in ("plain", "empty mode", "capture", "observer")}
    stops, walks, seen = [], [], None
    for _ in range(args.rounds):
        res["plain"] += block()
        with EmptyMode():
            res["empty mode"] += block()
        with npu_doctor.capture(os.path.join(out, "c.npud.json"), steps=None):
            res["capture"] += block()
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                      with_stack=True, profile_memory=True, with_modules=True)
        prof.__enter__()
        res["observer"] += block()
        t0 = time.perf_counter()
        result = torch.autograd._disable_profiler()   # collection only: what prof.__exit__ starts with
        stops.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        seen = walk_tree(result)
        walks.append(time.perf_counter() - t0)
    plain = statistics.median(res["plain"])
    print("%s: %d aten ops per step (dispatch mode), torch %s, main-thread CPU per step, %d rounds"
          % (args.model, CountMode.ops, torch.__version__, args.rounds))
    print("| mode | ms/step | ratio | us per op |")
    print("|---|---:|---:|---:|")
    for mode, times in res.items():
        m = statistics.median(times)
        print("| %s | %.1f | %.2fx | %.1f |" % (mode, m * 1e3, m / plain, (m - plain) / CountMode.ops * 1e6))
    print("observer: stop %.2f s, event tree walk %.2f s for 3 steps; %d ops (nested ones too), %d input tensors, "
          "%d tensor ids" % (statistics.median(stops), statistics.median(walks), *seen))


if __name__ == "__main__":
    main()
