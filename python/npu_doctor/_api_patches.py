"""Hooks on torch API functions: the calls torch_npu implements its own way
(F.scaled_dot_product_attention, recorded as `python_api` events) and the backward pass
(torch.autograd.backward / grad, which place backward ops and may end a step). Installed once
by Recorder.start and kept for the process (inert without an active recorder, _hooks).

Every wrapper calls the original with the same arguments and returns its result (or lets
its exception through) unchanged; recording happens around it and never raises (but passes
the program's own exceptions on, _errors.py).
"""

import functools
import sys

from ._errors import pass_on
from ._transparent import call_from, compiling, keep_builtin
from . import _frames, _hooks

# --- torch API calls torch_npu implements its own way ------------------------------------

_api_patched = [False]


def patch_api_functions():
    """Wraps F.scaled_dot_product_attention (torch >= 2.0) so each call is recorded with its
    arguments (FUSE008) and the CPU/CUDA ops it runs here nest inside it as its implementation.
    Installed when the capture starts, right after `import torch`, so that later
    `from torch.nn.functional import scaled_dot_product_attention` bindings and torch's own
    module-level lookups (F.multi_head_attention_forward) see the wrapper; it stays installed,
    inert without a recording recorder."""
    if _api_patched[0]:
        return
    _api_patched[0] = True
    import torch.nn.functional as F
    orig = F.__dict__.get("scaled_dot_product_attention")
    if orig is None:
        return

    @functools.wraps(orig)
    def scaled_dot_product_attention(*args, **kwargs):
        if compiling():   # traced by torch.compile: the program's call, as plainly (_transparent)
            return orig(*args, **kwargs)
        rec = _hooks.active
        if rec is None or not rec.recording:
            return call_from(sys._getframe(1), orig, *args, **kwargs)
        t0 = rec.now()
        result = call_from(sys._getframe(1), orig, *args, **kwargs)
        t1 = rec.now()
        caller = sys._getframe(1)
        rec.python_calls.record_sdpa(args, kwargs, result, t0, t1, caller, _frames.is_user_frame(caller))
        return result

    F.scaled_dot_product_attention = keep_builtin(scaled_dot_product_attention, orig)


# --- the backward pass -------------------------------------------------------------------

_autograd_patched = [False]


def patch_autograd():
    """Counts torch.autograd.backward / grad calls in progress (Tensor.backward calls the
    former): on torch 1.x, where autograd does not say which node runs, this is how the
    recorder knows an op belongs to the backward pass (_autograd.py). The outermost
    backward() returning may end a step (programs without an optimizer, _recorder.py)."""
    if _autograd_patched[0]:
        return
    _autograd_patched[0] = True
    import torch.autograd as ag
    for name in ("backward", "grad"):
        orig = getattr(ag, name, None)
        if orig is None:
            continue

        def wrapper(*args, _orig=orig, _ends_step=name == "backward", **kwargs):
            rec = _hooks.active
            links = rec.links if rec is not None else None
            if links is None:
                return call_from(sys._getframe(1), _orig, *args, **kwargs)
            if links.in_backward == 0 and rec.recording:
                try:
                    links.backward_stack = _frames.user_stack_json(sys._getframe(1))
                except Exception as e:
                    pass_on(e)
                    links.backward_stack = None
            links.in_backward += 1
            try:
                result = call_from(sys._getframe(1), _orig, *args, **kwargs)
            finally:
                links.in_backward -= 1
                if links.in_backward == 0:
                    links.backward_passes += 1
            if _ends_step and links.in_backward == 0:
                rec.on_step_end("backward")
            return result

        setattr(ag, name, keep_builtin(functools.wraps(orig)(wrapper), orig))

