"""The aten-level hook: a TorchDispatchMode that records every op the dispatcher runs.

PyTorch disables the mode while its __torch_dispatch__ runs, so the op itself (and any
tensor call the recorder might make) does not come back here. The recorder only reads
tensor metadata, which runs no op at all.

Ops whose only kernel is a CompositeExplicitAutograd one (torch.logcumsumexp calls
aten::_logcumsumexp) run that kernel with the mode back on, so the kernel ops they call
are recorded too, nested in the op: on an NPU those are what must have a kernel.
"""

import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ._frames import dispatch_caller

_MISSING = object()
_EXPLICIT_KEYS = [getattr(torch._C.DispatchKey, k) for k in
                  ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd")
                  if hasattr(torch._C.DispatchKey, k)]
_BACKEND_KEYS = [getattr(torch._C.DispatchKey, k) for k in ("CPU", "CUDA") if hasattr(torch._C.DispatchKey, k)]


# Generic kernels that only allocate, copy or fill (clone = empty_like + copy_), or only call
# another overload of themselves (sum -> sum.dim_IntList): what they call has a kernel on
# every NPU, so recording it would only add ops.
_PLAIN_COMPOSITES = frozenset((
    "clone", "contiguous", "copy", "_to_copy", "lift_fresh", "empty_like", "new_empty", "new_empty_strided",
    "new_zeros", "new_ones", "new_full", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
    "randint_like", "fill", "zero", "sum", "mean", "_copy_from_and_resize", "resize_as_",
))


# Convolutions: every backend (torch_npu included) implements convolution / _convolution /
# convolution_backward whole; their composite kernels only pick a CPU/GPU library kernel
# (mkldnn_, cudnn_, slow_conv...), which says nothing about an NPU and costs a Python round
# trip per layer.
_BACKEND_FAMILIES = ("convolution", "_convolution", "mkldnn_", "cudnn_", "miopen_", "_nnpack", "slow_conv",
                     "thnn_conv", "_slow_conv")


def _explicit_key(func, name):
    """The composite key to run `func` at so its inner ops are seen, or None: the op has a
    CompositeExplicitAutograd kernel and no CPU/CUDA kernel of its own, and returns no
    view (views and detach only re-wrap their input, detach by calling itself)."""
    has = getattr(torch._C, "_dispatch_has_kernel_for_dispatch_key", None)
    base = name.split("::")[-1].split(".")[0] if name else ""
    if has is None or not base or base in _PLAIN_COMPOSITES or base.startswith(_BACKEND_FAMILIES):
        return None
    try:
        if any(r.alias_info is not None for r in func._schema.returns):
            return None
        if any(has(name, k) for k in _BACKEND_KEYS):
            return None
        for k in _EXPLICIT_KEYS:
            if has(name, k) and hasattr(func, "_op_dk"):
                return k
    except Exception:
        pass
    return None


def _dense_inputs(args):
    """At least one tensor input, all of them strided and not quantized (sparse and quantized
    tensors have kernels of their own the composite one must not replace)."""
    Tensor = torch.Tensor
    seen = False
    for a in args:
        items = a if isinstance(a, (list, tuple)) else (a,)
        for t in items:
            if isinstance(t, Tensor):
                if t.layout != torch.strided or t.is_quantized:
                    return False
                seen = True
    return seen


class _CaptureMode(TorchDispatchMode):
    def __init__(self, recorder):
        super().__init__()
        self._rec = recorder
        self._explicit = {}
        self._expanding = []   # ops whose composite kernel runs now (an op that calls itself runs plainly)

    def _run(self, func, args, kwargs):
        key = self._explicit.get(func, _MISSING)
        if key is _MISSING:
            key = self._explicit[func] = _explicit_key(func, self._rec.op_name(func))
        if key is not None and func not in self._expanding and _dense_inputs(args):
            self._expanding.append(func)
            try:
                with self:   # the kernel's own aten calls come back here, nested in this op
                    return func._op_dk(key, *args, **kwargs)
            finally:
                self._expanding.pop()
        return func(*args, **kwargs)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        rec = self._rec
        if rec.cut_at_forward and rec._dispatch_depth == 0:
            rec.forward_may_start(func, args)
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
            out = self._run(func, args, kwargs)   # the program's own exceptions pass through
            t1 = rec.now()
            if rec.recording:
                try:
                    rec.op_done(func, pre, out, t0, t1, dispatch_caller(sys._getframe(1)))
                except Exception as e:
                    rec.fail(e)
            return out
        finally:
            rec._dispatch_depth -= 1


def make_mode(recorder):
    return _CaptureMode(recorder)


def _has_named(items):
    Tensor = torch.Tensor
    for a in items:
        if isinstance(a, Tensor):
            if a.has_names():
                return True
        elif isinstance(a, (list, tuple)):
            if any(isinstance(t, Tensor) and t.has_names() for t in a):
                return True
    return False


def make_bypass(recorder):
    """What a dispatch mode cannot carry on torch versions with named tensors (1.x): an op on
    named tensors raises "NYI: Named tensors are currently unsupported in TorchScript" with
    any mode pushed. This torch-function mode runs such calls with dispatch modes off
    (unrecorded, said once on stderr), so the program never sees the capture. None where
    torch has no named tensors. Pushed by the recorder once the program names a tensor
    (_patches.py watches the ways to do that). (Tensor.as_subclass: _patches.py.)"""
    if not hasattr(torch.Tensor, "refine_names"):
        return None
    try:
        from torch.overrides import TorchFunctionMode
        from torch.utils._mode_utils import no_dispatch
    except ImportError:
        return None

    class _Bypass(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if recorder.recording and (_has_named(args) or (kwargs and (kwargs.get("names") is not None or
                                                                        _has_named(kwargs.values())))):
                recorder.note_once("named", "npu-doctor: ops on named tensors are not recorded "
                                            "(torch cannot send them through a dispatch mode)")
                with no_dispatch():
                    return func(*args, **kwargs)
            return func(*args, **kwargs)

    return _Bypass()
