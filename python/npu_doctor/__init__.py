"""npu-doctor capture shim: records what a PyTorch program does, for `npu-doctor` to diagnose.

    with npu_doctor.capture("run.npud.json", steps=(1, 3)):
        train()

or, with no code change: `npu-doctor run -- python train.py`. A step is one
`optimizer.step()` call, or one `npu_doctor.step()` call once the program makes one.
Pure Python; importing this package does not import torch.
"""

import sys

__version__ = "0.1.0"
__all__ = ["capture", "step", "amp_check", "__version__"]

_current = [None]   # the active Recorder


class capture:
    """Context manager (or start()/stop()) recording steps `steps` (inclusive pair, or
    None for every step inside the block) into a Chrome-trace capture file at `path`.
    `dump`: also dump the selected tensors ("all", or module paths / aten ops with * globs,
    docs/formats/dump.md) of those steps to `dump_dir` (default: `dump/` beside `path`)."""

    def __init__(self, path, steps=None, dump=None, dump_dir=None):
        self.path = path
        self.steps = _normalize_steps(steps)
        self.dump = dump
        self.dump_dir = dump_dir
        self._recorder = None
        self._dumper = None

    def start(self):
        if _current[0] is not None and not _current[0].finished:
            sys.stderr.write("npu-doctor: a capture is already running; %s is not recorded\n" % self.path)
            return self
        try:
            from ._recorder import Recorder
            rec = Recorder(self.path, self.steps)
            rec.start()
        except Exception as e:  # never raise into the program (its own exceptions excepted)
            _pass_on(e)
            sys.stderr.write("npu-doctor: capture not started: %s: %s\n" % (type(e).__name__, e))
            return self
        self._recorder = rec
        _current[0] = rec
        if self.dump:
            import os
            from ._dump import start_dump
            self._dumper = start_dump(rec, self.dump, self.dump_dir or os.path.join(
                os.path.dirname(os.path.abspath(self.path)), "dump"))
        return self

    def stop(self):
        rec = self._recorder
        if rec is None:
            return
        try:
            rec.finish("stopped")
        except Exception as e:
            _pass_on(e)
            sys.stderr.write("npu-doctor: capture not closed cleanly: %s\n" % e)
        if _current[0] is rec:
            _current[0] = None
        if self._dumper is not None:
            try:
                self._dumper.close()
            except Exception as e:
                _pass_on(e)
            self._dumper = None

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False   # the program's exceptions are its own

    @property
    def steps_completed(self):
        return self._recorder.step if self._recorder is not None else 0


def step():
    """Marks the end of one step. Once called, optimizer.step() and backward() no longer end steps."""
    rec = _current[0]
    if rec is not None:
        rec.on_step_end("explicit")


def _pass_on(exc):
    """_errors.pass_on, imported when needed: importing this package stays light."""
    from ._errors import pass_on
    pass_on(exc)


def _normalize_steps(steps):
    if steps is None:
        return None
    if isinstance(steps, str):
        from ._steps import parse_steps
        return parse_steps(steps)
    first, last = steps
    return (int(first), None if last is None else int(last))


def amp_check(model, inputs, dtype="fp16", level="O1", path=None, lists=None, loss_fn=None, emulate=None):
    """Runs `model(*inputs)` once (then `loss_fn(output).backward()` when given) in low
    precision with an fp32 shadow of every op; returns the per-op records, `.output` and
    `.shadow_output` (see docs/amp-check.md). `lists`: a `<aten name>\t<policy>` file
    (default: $NPUD_AMP_LISTS, else a small built-in list); `path`: also write the capture."""
    from ._amp import amp_check as run
    return run(model, inputs, dtype=dtype, level=level, path=path, lists=lists, loss_fn=loss_fn, emulate=emulate)
