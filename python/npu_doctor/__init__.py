"""npu-doctor capture shim: records what a PyTorch program does, for `npu-doctor` to diagnose.

    with npu_doctor.capture("run.npud.json", steps=(1, 3)):
        train()

or, with no code change: `npu-doctor run -- python train.py`. A step is one
`optimizer.step()` call, or one `npu_doctor.step()` call once the program makes one.
Pure Python; importing this package does not import torch.
"""

import sys

__version__ = "0.1.0"
__all__ = ["capture", "step", "__version__"]

_current = [None]   # the active Recorder


class capture:
    """Context manager (or start()/stop()) recording steps `steps` (inclusive pair, or
    None for every step inside the block) into a Chrome-trace capture file at `path`."""

    def __init__(self, path, steps=None):
        self.path = path
        self.steps = _normalize_steps(steps)
        self._recorder = None

    def start(self):
        if _current[0] is not None and not _current[0].finished:
            sys.stderr.write("npu-doctor: a capture is already running; %s is not recorded\n" % self.path)
            return self
        try:
            from ._recorder import Recorder
            rec = Recorder(self.path, self.steps)
            rec.start()
        except Exception as e:  # never raise into the program
            sys.stderr.write("npu-doctor: capture not started: %s: %s\n" % (type(e).__name__, e))
            return self
        self._recorder = rec
        _current[0] = rec
        return self

    def stop(self):
        rec = self._recorder
        if rec is None:
            return
        try:
            rec.finish("stopped")
        except Exception as e:
            sys.stderr.write("npu-doctor: capture not closed cleanly: %s\n" % e)
        if _current[0] is rec:
            _current[0] = None

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False   # the program's exceptions are its own

    @property
    def steps_completed(self):
        return self._recorder.step if self._recorder is not None else 0


def step():
    """Marks the end of one step. Once called, optimizer.step() no longer counts steps."""
    rec = _current[0]
    if rec is not None:
        rec.on_step_end(explicit=True)


def _normalize_steps(steps):
    if steps is None:
        return None
    if isinstance(steps, str):
        from ._recorder import parse_steps
        return parse_steps(steps)
    first, last = steps
    return (int(first), None if last is None else int(last))
