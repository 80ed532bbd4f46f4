"""The aten-level hook: a TorchDispatchMode that records every op the dispatcher runs.

PyTorch disables the mode while its __torch_dispatch__ runs, so the op itself (and any
tensor call the recorder might make) does not come back here. The recorder only reads
tensor metadata, which runs no op at all.
"""

import sys

from torch.utils._python_dispatch import TorchDispatchMode


class _CaptureMode(TorchDispatchMode):
    def __init__(self, recorder):
        super().__init__()
        self._rec = recorder

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        rec = self._rec
        if not rec.recording or rec.mute_ops:
            return func(*args, **kwargs)
        rec._dispatch_depth += 1
        try:
            try:
                pre = rec.op_inputs(args, kwargs) if rec.op_name(func) else None
            except Exception as e:
                rec.fail(e)
                pre = None
            if pre is None:
                return func(*args, **kwargs)
            t0 = rec.now()
            out = func(*args, **kwargs)   # the program's own exceptions pass through
            t1 = rec.now()
            if rec.recording:
                try:
                    rec.op_done(func, pre, out, t0, t1, sys._getframe(1))
                except Exception as e:
                    rec.fail(e)
            return out
        finally:
            rec._dispatch_depth -= 1


def make_mode(recorder):
    return _CaptureMode(recorder)
