"""optimizer.step() hooks: count steps (a step ends when the outermost step() returns),
record each recorded step's optimizer settings (`optimizer_config`, FUSE007), and, in amp-check,
read the gradients before the update and run a step's closure in low precision. Installed
once by Recorder.start and kept for the process (inert without an active recorder, _hooks).

Every wrapper calls the original with the same arguments and returns its result (or lets
its exception through) unchanged; recording happens around it and never raises (but passes
the program's own exceptions on, _errors.py).
"""

import functools
import sys

from ._errors import pass_on
from ._transparent import call_from
from . import _hooks

# --- steps -------------------------------------------------------------------------------

# Nesting of wrapped step() calls (a subclass step calling super().step()); _tensor_patches
# reads it too: an optimizer's own .to(device) and factories inside step() are no placements.
step_depth = [0]


def _notify_step():
    rec = _hooks.active
    if rec is not None:
        amp = getattr(rec, "amp", None)
        if amp is not None:
            amp.after_optimizer_step()
        rec.on_step_end("optimizer")


def _notify_step_begin(optimizer, closure):
    """Records the optimizer's foreach/fused settings (FUSE007 judges its loops by them);
    amp-check: gradients are read right before the outermost optimizer.step() runs, or, with a
    closure, after its first call."""
    rec = _hooks.active
    if rec is not None and rec.recording:
        rec.python_calls.record_optimizer(optimizer, sys._getframe(2))
    amp = getattr(rec, "amp", None) if rec is not None else None
    if amp is not None:
        amp.note_optimizer(optimizer)   # before recording too: its parameters' .grad (1.x backward)
    if amp is not None and rec.recording:
        try:
            amp.before_optimizer_step(optimizer, closure=closure is not None)
        except Exception as e:   # never raise into the program
            rec.fail(e)


def _closure_of(args, kwargs):
    """The closure given to optimizer.step (`step(closure)`, `step(closure=...)`), or None."""
    closure = kwargs.get("closure") if kwargs else None
    if closure is None and args and callable(args[0]):
        closure = args[0]
    return closure if callable(closure) else None


def _amp_closure(optimizer, closure, args, kwargs):
    """amp-check: the closure wrapped so its forward and backward run in low precision (the
    optimizer's own math stays fp32); (args, kwargs) to call step with."""
    rec = _hooks.active
    amp = getattr(rec, "amp", None) if rec is not None else None
    if amp is None or closure is None:
        return args, kwargs
    calls = [0]

    @functools.wraps(closure)
    def run_closure(*a, **k):
        inside = amp.closure_called()
        calls[0] += 1
        try:
            return closure(*a, **k)
        finally:
            try:
                amp.closure_returned(optimizer, inside, calls[0] == 1)
            except Exception as e:   # never raise into the program (its own exceptions excepted)
                pass_on(e)
                rec = _hooks.active
                if rec is not None:
                    rec.fail(e)

    if kwargs and kwargs.get("closure") is closure:
        return args, dict(kwargs, closure=run_closure)
    return (run_closure,) + tuple(args[1:]), kwargs


def _wrap_step_of(cls):
    orig = cls.__dict__.get("step")
    if orig is None or not callable(orig) or getattr(orig, "_npud_wrapped", False):
        return

    @functools.wraps(orig)
    def step(self, *args, **kwargs):
        step_depth[0] += 1
        rec = _hooks.active if step_depth[0] == 1 else None
        # The optimizer's ops walk the stack up to this frame only.
        previous = rec.enter_call(sys._getframe()) if rec is not None else None
        try:
            if step_depth[0] == 1:
                closure = _closure_of(args, kwargs)
                _notify_step_begin(self, closure)
                args, kwargs = _amp_closure(self, closure, args, kwargs)
            result = call_from(sys._getframe(1), orig, self, *args, **kwargs)
        finally:
            step_depth[0] -= 1
            if rec is not None:
                rec.leave_call(previous)
        if step_depth[0] == 0:
            _notify_step()
        return result

    step._npud_wrapped = True
    setattr(cls, "step", step)


def _wrap_optimizer_class(cls):
    import torch
    for klass in cls.__mro__:
        if klass is torch.optim.Optimizer or klass is object:
            continue
        if isinstance(klass, type) and issubclass(klass, torch.optim.Optimizer):
            _wrap_step_of(klass)


_optimizer_patched = [False]


def patch_optimizers():
    """Counts optimizer.step() calls: wraps `step` of every Optimizer subclass, existing
    ones now and later ones when an instance is created. Stays installed (inert without
    an active recorder)."""
    if _optimizer_patched[0]:
        return
    import torch
    base = torch.optim.Optimizer
    pending = list(base.__subclasses__())
    seen = set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        _wrap_step_of(cls)
        pending.extend(cls.__subclasses__())

    orig_init = base.__init__

    @functools.wraps(orig_init)
    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        try:
            _wrap_optimizer_class(type(self))
            rec = _hooks.active
            amp = getattr(rec, "amp", None) if rec is not None else None
            if amp is not None:
                amp.note_optimizer(self)   # its parameters' .grad stay fp32 before its first step too
        except Exception as e:
            pass_on(e)
            rec = _hooks.active
            if rec is not None:
                rec.fail(e)

    base.__init__ = __init__
    _optimizer_patched[0] = True

