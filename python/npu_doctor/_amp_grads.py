"""Gradient magnitude histograms at optimizer.step(), and the program's GradScaler /
autocast calls (docs/formats/amp.md, "Gradients" and "Loss scaling").
"""

import functools
import math
import sys

import torch

from ._dispatch import plain_tensor
from ._errors import pass_on, pass_on_async
from ._transparent import call_from
from . import _frames
from ._amp_metrics import _cpu, metric_dtype

LOG2_MIN, LOG2_MAX = -40, 16
FP16_TINY = 2.0 ** -24
FP16_MAX = 65504.0
_tolist = torch._C._TensorBase.tolist
_to = torch._C._TensorBase.to
_item = torch._C._TensorBase.item


CHUNK_ELEMENTS = 1 << 24   # gradients counted together, flattened into one float32 buffer


def grad_histogram(grads, loss_scale=None):
    """Counts over all elements of `grads` (each divided by `loss_scale` when given)."""
    buckets = LOG2_MAX - LOG2_MIN + 1
    totals = [0] * (4 + buckets)
    elements = 0
    chunk, size = [], 0
    for g in grads:
        n = g.numel()
        if n == 0:
            continue
        elements += n
        if chunk and (size + n > CHUNK_ELEMENTS or g.device != chunk[0].device):
            _add(totals, _chunk_counts(chunk, loss_scale, buckets))
            chunk, size = [], 0
        chunk.append(g)
        size += n
    if chunk:
        _add(totals, _chunk_counts(chunk, loss_scale, buckets))
    return {"params": len(grads), "elements": elements, "zero": totals[0], "nonfinite": totals[1],
            "underflow_fp16": totals[2], "overflow_fp16": totals[3], "log2_min": LOG2_MIN,
            "log2_hist": totals[4:]}


def _add(totals, counts):
    for i, c in enumerate(counts):
        totals[i] += c


def _chunk_counts(grads, loss_scale, buckets):
    """[zero, nonfinite, underflow, overflow, log2 buckets...] of some gradients on one
    device: one float32 buffer, frexp for the exponents, comparisons into float buffers
    (bool tensors cost several times more on CPU), one host read. A non-finite element
    sends the chunk to the exact per-gradient path."""
    try:
        a = torch.cat([_to(_flat(g), torch.float32) for g in grads]).abs_()
        if loss_scale:
            a.div_(loss_scale)
        buf = torch.empty_like(a)
        _, e = torch.frexp(a)   # a = m * 2^e, m in [0.5, 1): floor(log2 a) = e - 1; a = 0 gives e = 0
        idx = _to((e - 1).clamp_(LOG2_MIN, LOG2_MAX) - LOG2_MIN, torch.int64)
        hist = torch.bincount(idx, minlength=buckets)
        head = torch.stack([a.sum(), torch.eq(a, 0, out=buf).sum(), torch.lt(a, FP16_TINY, out=buf).sum(),
                            torch.gt(a, FP16_MAX, out=buf).sum()])
        total, zero, below_tiny, over = _tolist(_cpu(head))
    except RuntimeError as e:   # a device without frexp or bincount kernels
        pass_on_async(e)
        return _exact_counts(grads, loss_scale, buckets)
    if not math.isfinite(total):
        return _exact_counts(grads, loss_scale, buckets)
    hist = [int(x) for x in _tolist(_cpu(hist))]
    zero = int(zero)
    hist[-1 - LOG2_MIN] -= zero   # zeros took the bucket of e = 0
    return [zero, 0, int(below_tiny) - zero, int(over)] + hist


def _flat(g):
    """A gradient's values as a flat real tensor: a complex gradient by its magnitudes (what
    overflows or underflows in fp16 is the size of the number, not its real part)."""
    flat = g.detach().reshape(-1)
    return flat.abs() if flat.is_complex() else flat


def _exact_counts(grads, loss_scale, buckets):
    totals = None
    for g in grads:
        mdt = metric_dtype(g.device.type)
        v = _to(_flat(g), mdt)
        if loss_scale:
            v = v / loss_scale
        a = v.abs()
        fin = torch.isfinite(v)
        nonzero = fin & (a > 0)
        e = torch.floor(torch.log2(torch.where(nonzero, a, torch.ones_like(a))))
        idx = _to(e.clamp(LOG2_MIN, LOG2_MAX) - LOG2_MIN, torch.int64)
        hist = torch.bincount(idx, weights=_to(nonzero, mdt), minlength=buckets)
        counts = torch.stack([_to(x, mdt) for x in ((fin & (a == 0)).sum(), (~fin).sum(),
                                                    (nonzero & (a < FP16_TINY)).sum(), (fin & (a > FP16_MAX)).sum())])
        part = _to(_cpu(torch.cat([_to(counts, hist.dtype), hist])), torch.float64)
        totals = part if totals is None else totals + part
    return [int(x) for x in _tolist(totals)]


def optimizer_grads(optimizer):
    grads = []
    for group in getattr(optimizer, "param_groups", ()):
        for p in group.get("params", ()):
            g = getattr(p, "grad", None)
            if g is not None and plain_tensor(g, True):   # (sparse and subclass gradients are not measured)
                grads.append(g)
    return grads


# --- GradScaler / autocast calls ---------------------------------------------------------

SCALER_METHODS = ("scale", "unscale_", "step", "update")


def scaler_classes():
    classes = []
    for owner in ("torch.cuda.amp", "torch.amp", "torch.npu.amp", "torch_npu.npu.amp"):
        mod = _module(owner)
        cls = getattr(mod, "GradScaler", None) if mod is not None else None
        if isinstance(cls, type) and cls not in classes:
            classes.append(cls)
    return classes


def _module(path):
    obj = sys.modules.get(path.split(".")[0])
    for part in path.split(".")[1:]:
        if obj is None:
            return None
        obj = getattr(obj, part, None)
    return obj


def scale_value(scaler):
    """The scaler's current loss scale (no host-sync event: the shim's own read), or None
    when it is disabled (GradScaler turns itself off without CUDA)."""
    if not getattr(scaler, "_enabled", True):
        return None
    s = getattr(scaler, "_scale", None)
    if s is None:
        return float(getattr(scaler, "_init_scale", 0.0) or 0.0)
    return float(_item(s))


class AmpApiPatches:
    """Wraps GradScaler methods and autocast.__enter__ while recording. Each wrapper calls
    the original with the same arguments and returns its result unchanged."""

    def __init__(self, session):
        self._session = session
        self._saved = []

    def install(self):
        for cls in scaler_classes():
            for name in SCALER_METHODS:
                orig = cls.__dict__.get(name)
                if orig is None or getattr(orig, "_npud_wrapped", False):
                    continue
                self._saved.append((cls, name, orig))
                setattr(cls, name, self._wrap_scaler(orig, "GradScaler." + name, name))
        ac = _module("torch.amp.autocast_mode")
        cls = getattr(ac, "autocast", None) if ac is not None else None
        if isinstance(cls, type):
            orig = cls.__dict__.get("__enter__")
            if orig is not None and not getattr(orig, "_npud_wrapped", False):
                self._saved.append((cls, "__enter__", orig))
                setattr(cls, "__enter__", self._wrap_autocast(orig))
            orig = cls.__dict__.get("__init__")
            if orig is not None and not getattr(orig, "_npud_wrapped", False):
                self._saved.append((cls, "__init__", orig))
                setattr(cls, "__init__", _wrap_autocast_init(orig))
            orig = cls.__dict__.get("__exit__")
            if orig is not None and not getattr(orig, "_npud_wrapped", False):
                self._saved.append((cls, "__exit__", orig))
                setattr(cls, "__exit__", self._wrap_autocast_exit(orig))

    def remove(self):
        for cls, name, orig in reversed(self._saved):
            try:
                setattr(cls, name, orig)
            except Exception as e:
                pass_on(e)
        self._saved = []

    def _wrap_scaler(self, orig, event_name, method):
        session = self._session

        @functools.wraps(orig)
        def wrapper(scaler, *args, **kwargs):
            rec = session.rec
            if not rec.recording:
                return call_from(sys._getframe(1), orig, scaler, *args, **kwargs)
            caller = sys._getframe(1)
            before = None
            try:
                with rec.shim_ops():   # reading the scale is not the program's op
                    before = scale_value(scaler)
                # written before the call: GradScaler.step ends the step (and maybe the capture)
                if _frames.is_user_frame(caller):   # GradScaler.step's own unscale_ is not the user's
                    session.write_api_event(event_name, rec.now(), caller,
                                            {"scale": before, "enabled": bool(getattr(scaler, "_enabled", True))})
            except Exception as e:
                rec.fail(e)
            result = call_from(sys._getframe(1), orig, scaler, *args, **kwargs)
            try:
                session.on_scaler_call(method, scaler, args, before)
            except Exception as e:
                rec.fail(e)
            return result

        wrapper._npud_wrapped = True
        return wrapper

    def _wrap_autocast(self, orig):
        session = self._session

        @functools.wraps(orig)
        def __enter__(ctx):
            rec = session.rec
            if not rec.recording or session.own_autocast:
                return call_from(sys._getframe(1), orig, ctx)
            caller = sys._getframe(1)
            if not _frames.is_user_frame(caller) and caller.f_code.co_name == "decorate_autocast":
                caller = caller.f_back   # @autocast() on a function: the call site is the user's
            t0 = rec.now()
            result = call_from(sys._getframe(1), orig, ctx)
            if getattr(ctx, "_npud_asked", getattr(ctx, "_enabled", True)) and not getattr(ctx, "_npud_open", False):
                ctx._npud_open = True   # an op inside it runs under autocast (AMP006: banned ops)
                session.autocast_depth += 1
            try:
                if _frames.is_user_frame(caller):
                    dtype = getattr(ctx, "fast_dtype", None)
                    session.write_api_event("autocast", t0, caller, {
                        "api": type(ctx).__module__.replace(".autocast_mode", "") + "." + type(ctx).__name__,
                        "device_type": str(getattr(ctx, "device", "")),
                        "dtype": str(dtype).replace("torch.", "") if dtype is not None else "",
                        "enabled": bool(getattr(ctx, "_enabled", True))})
            except Exception as e:
                rec.fail(e)
            return result

        __enter__._npud_wrapped = True
        return __enter__

    def _wrap_autocast_exit(self, orig):
        session = self._session

        @functools.wraps(orig)
        def __exit__(ctx, *args):
            if getattr(ctx, "_npud_open", False):
                ctx._npud_open = False
                session.autocast_depth -= 1
            return call_from(sys._getframe(1), orig, ctx, *args)

        __exit__._npud_wrapped = True
        return __exit__


def _wrap_autocast_init(orig):
    """Keeps what the program asked for: `torch.autocast("cuda")` on a machine without CUDA
    disables itself, but the program means autocast on the accelerator it moves to."""

    @functools.wraps(orig)
    def __init__(ctx, *args, **kwargs):
        call_from(sys._getframe(1), orig, ctx, *args, **kwargs)
        try:
            ctx._npud_asked = bool(kwargs["enabled"] if "enabled" in kwargs else args[2] if len(args) > 2 else True)
        except Exception as e:
            pass_on(e)

    __init__._npud_wrapped = True
    return __init__
