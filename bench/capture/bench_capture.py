"""What the capture costs, against the plain program and torch.profiler, on realistic models.

    python bench/capture/bench_capture.py [--models gpt,tiny_gpt,cnn] [--rounds 4] [--steps 5]
                                          [--modes capture,profiler,amp] [--whole-steps 10]
                                          [--baseline DIR]

Two measures, both in the same run, so they share the machine's state:
  - per recorded step: in this process, blocks of `--steps` plain steps alternated with
    blocks under each mode (after 3 warm-up steps), `--rounds` times; median step time,
    its ratio to plain, and the cost per recorded op ((mode - plain) / ops per step). A
    torch.profiler block's stop (trace collection, not export) is timed on its own.
  - whole process (with --whole-steps N > 0): run_model.py as a child, plain and under each
    mode: the capture from the environment (NPUD_CAPTURE, steps 1:3, as `npu-doctor run`
    records), torch.profiler (all steps, trace exported), amp-check (NPUD_AMP, steps 1:3);
    median wall time of `--rounds` alternated runs and the child's peak RSS (its VmHWM).
Modes: capture (every op recorded), profiler (record_shapes, with_stack), amp (amp-check:
fp16 O1 emulated, every op shadowed).
--baseline DIR: a folder holding an older `npu_doctor` package (`git archive REV python | tar
-x -C /tmp/base` gives /tmp/base/python), measured beside this checkout's: per recorded step,
each round runs one child process per shim (alternating; two shims in one process would each
see the other's patches as user code), whole process likewise; rows "(baseline)". Rows come out as markdown; the header says which
torch and which BLAS ran the matmuls (models.blas()).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(ROOT, "python")
if "--shim" in sys.argv:   # a per-step child measuring another npu_doctor package
    PYDIR = os.path.abspath(sys.argv[sys.argv.index("--shim") + 1])
sys.path.insert(0, PYDIR)
sys.path.insert(0, HERE)

import torch  # noqa: E402

import models  # noqa: E402
import npu_doctor  # noqa: E402
from npu_doctor._amp import AmpConfig, AmpSession  # noqa: E402
from npu_doctor._recorder import Recorder  # noqa: E402


def _events(path):
    with open(path) as f:
        return sum(1 for line in f if '"cat":"aten"' in line)


class Block:
    """Runs `steps` steps under one mode; returns the step times and what it recorded."""

    def __init__(self, step, out_dir):
        self.step = step
        self.out = out_dir
        self.n = 0

    def timed(self, steps):
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            self.step()
            times.append(time.perf_counter() - t0)
        return times

    def plain(self, steps):
        return self.timed(steps), 0, 0.0, 0

    def capture(self, steps):
        self.n += 1
        path = os.path.join(self.out, "capture%d.npud.json" % self.n)
        with npu_doctor.capture(path, steps=None):
            times = self.timed(steps)
        return times, _events(path), 0.0, os.path.getsize(path)

    def amp(self, steps):
        self.n += 1
        path = os.path.join(self.out, "amp%d.npud.json" % self.n)
        session = AmpSession(AmpConfig("fp16", "O1", True))
        try:
            rec = Recorder(path, None, amp=session)
        except TypeError:   # a --baseline shim older than the recorder's declared features
            rec = Recorder(path, None)
            rec.amp = session
            session.attach(rec)
        rec.start()
        times = self.timed(steps)
        rec.finish("stopped")
        return times, _events(path), 0.0, os.path.getsize(path)

    def profiler(self, steps):
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                      record_shapes=True, with_stack=True)
        prof.__enter__()
        times = self.timed(steps)
        t0 = time.perf_counter()
        prof.__exit__(None, None, None)
        stop = time.perf_counter() - t0
        ops = sum(1 for e in prof.events() if e.name.startswith("aten::"))
        return times, ops, stop, 0


def per_step(name, modes, rounds, steps):
    return summarize(name, modes, *collect(name, modes, rounds, steps))


def collect(name, modes, rounds, steps):
    """(step times per mode incl. "plain", aten events per mode, profiler stops, max bytes)."""
    _, step = models.make(name)
    block = Block(step, tempfile.mkdtemp(prefix="npud-bench-capture-"))
    block.timed(3)   # warm-up
    times = {m: [] for m in ["plain"] + modes}
    ops = {m: 0 for m in modes}
    stops = {m: [] for m in modes}
    sizes = {m: 0 for m in modes}
    for _ in range(rounds):
        times["plain"] += block.plain(steps)[0]
        for m in modes:
            t, n, stop, size = getattr(block, m)(steps)
            times[m] += t
            ops[m] += n
            stops[m].append(stop)
            sizes[m] = max(sizes[m], size)
    return times, {m: ops[m] / (rounds * steps) for m in modes}, stops, {m: sizes[m] / steps for m in modes}


def summarize(name, modes, times, ops, stops, sizes, plain=None):
    plain = statistics.median(times["plain"]) if plain is None else plain
    rows = []
    for m in modes:
        med = statistics.median(times[m])
        per_step_ops = ops[m]
        per_op = (med - plain) / per_step_ops * 1e6 if per_step_ops else float("nan")
        rows.append((name, m, plain * 1e3, med * 1e3, med / plain, per_step_ops, per_op,
                     statistics.median(stops[m]), sizes[m] / 1e6))
    return rows


def per_step_against(name, modes, rounds, steps, baseline):
    """Rows for this shim and the baseline, each round one child per shim (alternating)."""
    import json
    shim_modes = [m for m in modes if m in ("capture", "amp")]
    raw = {"": None, " (baseline)": None}
    for _ in range(rounds):
        for suffix, shim in (("", PYDIR), (" (baseline)", baseline)):
            cmd = [sys.executable, os.path.abspath(__file__), "--child", "--shim", shim, "--models", name,
                   "--modes", ",".join(modes if not suffix else shim_modes), "--rounds", "1", "--steps", str(steps)]
            out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout
            got = json.loads(out.strip().splitlines()[-1])
            if raw[suffix] is None:
                raw[suffix] = got
            else:
                for key in ("times", "stops"):
                    for m, v in got[key].items():
                        raw[suffix][key][m] += v
    plain = statistics.median(raw[""]["times"]["plain"] + raw[" (baseline)"]["times"]["plain"])
    rows = []
    for suffix, these in (("", modes), (" (baseline)", shim_modes)):
        r = raw[suffix]
        for row in summarize(name, these, r["times"], r["ops"], r["stops"], r["sizes"], plain):
            rows.append((row[0], row[1] + suffix) + row[2:])
    order = [m + s for m in modes for s in ("", " (baseline)") if s == "" or m in shim_modes]
    return sorted(rows, key=lambda row: order.index(row[1]))


def _run_child(cmd, env):
    """(wall s, the child's own peak RSS MB, which run_model.py prints last)."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit("benchmark child failed: %s" % " ".join(cmd))
    rss = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("peak_rss_kb ")]
    return wall, int(rss[-1]) / 1024.0 if rss else float("nan")


def whole_process(name, rounds, steps, modes, baseline=None):
    out = tempfile.mkdtemp(prefix="npud-bench-whole-")
    base = {k: v for k, v in os.environ.items() if not k.startswith("NPUD_")}

    def capture_env(pydir):
        return dict(base, PYTHONPATH=os.path.join(pydir, "npu_doctor", "_bootstrap") + os.pathsep + pydir,
                    NPUD_CAPTURE=os.path.join(out, "capture.npud.json"), NPUD_STEPS="1:3")
    amp_env = dict(NPUD_AMP="fp16", NPUD_AMP_LEVEL="O1", NPUD_AMP_EMULATE="1")
    shims = [("", PYDIR)] + ([(" (baseline)", os.path.abspath(baseline))] if baseline else [])
    child = [sys.executable, os.path.join(HERE, "run_model.py"), name, str(steps)]
    runs = [("plain", child, base)]
    for suffix, pydir in shims:
        if "capture" in modes:
            runs.append(("capture (steps 1:3)" + suffix, child, capture_env(pydir)))
    if "profiler" in modes:
        runs.append(("profiler (all steps)", child + ["--profiler"], base))
    for suffix, pydir in shims:   # as `npu-doctor amp-check` runs it (CPU emulation of fp16 O1)
        if "amp" in modes:
            runs.append(("amp-check (steps 1:3)" + suffix, child, dict(capture_env(pydir), **amp_env)))
    results = {label: [] for label, _, _ in runs}
    for _ in range(rounds):
        for label, cmd, env in runs:
            results[label].append(_run_child(cmd, env))
    plain = statistics.median(w for w, _ in results["plain"])
    rows = []
    for label, _, _ in runs:
        wall = statistics.median(w for w, _ in results[label])
        rss = max(r for _, r in results[label])
        rows.append((name, label, wall, wall / plain, rss))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="gpt,tiny_gpt,cnn")
    ap.add_argument("--modes", default="capture,profiler")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=5, help="steps per block")
    ap.add_argument("--whole-steps", type=int, default=10, help="steps of the whole-process runs (0: skip)")
    ap.add_argument("--baseline", help="folder holding an older npu_doctor package to measure beside this one")
    ap.add_argument("--shim", help=argparse.SUPPRESS)      # a child's npu_doctor folder (read at import)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    names = [m for m in args.models.split(",") if m]
    modes = [m for m in args.modes.split(",") if m]
    if args.baseline and not os.path.isfile(os.path.join(args.baseline, "npu_doctor", "__init__.py")):
        ap.error("--baseline %s: no npu_doctor package there (make one with "
                 "`git archive REV python | tar -x -C DIR` and pass DIR/python)" % args.baseline)
    if args.child:   # one model, raw per-step data as a JSON line for per_step_against
        import json
        times, ops, stops, sizes = collect(names[0], modes, args.rounds, args.steps)
        print(json.dumps({"times": times, "ops": ops, "stops": stops, "sizes": sizes}))
        return
    load = os.getloadavg()[0]
    print("torch %s, BLAS %s, %d intra-op threads, %d CPUs, Python %s"
          % (torch.__version__, models.blas(), torch.get_num_threads(), os.cpu_count(), sys.version.split()[0]))
    print()
    print("| model | mode | plain ms/step | mode ms/step | ratio | aten ops/step | us per op | stop s | MB/step |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        rows = (per_step_against(name, modes, args.rounds, args.steps, os.path.abspath(args.baseline))
                if args.baseline else per_step(name, modes, args.rounds, args.steps))
        for r in rows:
            print("| %s | %s | %.1f | %.1f | %.2fx | %.0f | %.1f | %.2f | %.2f |" % r, flush=True)
    if args.whole_steps > 0:
        print()
        print("| model | whole process, %d steps | wall s | ratio | peak RSS MB |" % args.whole_steps)
        print("|---|---|---:|---:|---:|")
        for name in names:
            for r in whole_process(name, args.rounds, args.whole_steps, modes, args.baseline):
                print("| %s | %s | %.2f | %.2fx | %.0f |" % r, flush=True)
    print()
    print("load average %.1f before, %.1f after" % (load, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
