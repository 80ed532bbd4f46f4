"""The capture's events for Python-level calls of the program (docs/formats/capture.md):
F.scaled_dot_product_attention (`python_api`), optimizer settings (`optimizer_config`),
placements and syncs (`record_python_event`). The Recorder owns one (`Recorder.python_calls`)
and hands it its event writer, tensor encoder and pid; the hooks (_optimizer_patches,
_api_patches, _tensor_patches) call it through the recorder. Errors go to Recorder.fail,
which passes the program's own exceptions on (_errors.py).
"""

import threading
import weakref

import torch

from . import _events, _frames
from ._errors import HEADROOM
from ._transparent import no_torch_function


class PythonCallEvents:
    """Writes the Python-call events of one recorder. Of the recorder it reads only these
    public attributes and methods: `recording`, `step`, `module_json`, `in_sync` (also set
    while a mask is read), `now()`, `ts()`, `shim_ops()` and `fail()`.

    `write`: the recorder's counted event write (a capture event's text); `tensors`: its
    _tensors.TensorEncoder; `pid`: the process id its events carry."""

    def __init__(self, rec, write, tensors, pid):
        self._rec = rec
        self._write = write
        self._tensors = tensors
        self._pid = pid
        self._mask_kinds = {}   # (id, version) of an SDPA mask -> (weakref, kind): _mask_kind

    def record_sdpa(self, args, kwargs, result, t0, t1, frame, from_user):
        """One `python_api` event per F.scaled_dot_product_attention call: inputs q, k, v and
        the mask when one is passed (docs/formats/capture.md), output, the other arguments as
        text, and `caller=library` when torch itself made the call (nn.MultiheadAttention).
        The ops it ran are recorded as usual and nest inside it by time."""
        rec = self._rec
        with no_torch_function(), HEADROOM:
            try:
                if not rec.recording:
                    return
                call = _sdpa_call(args, kwargs)
                Tensor = torch.Tensor
                seen_ids, seen_storages = {}, {}
                tensors = [call.get(k) for k in ("query", "key", "value", "attn_mask")]
                inputs = [self._tensors.tensor_json(x, i, seen_ids, seen_storages, False)
                          for i, x in enumerate(tensors) if isinstance(x, Tensor)]
                outputs = [self._tensors.tensor_json(result, 0, seen_ids, seen_storages, True)] if isinstance(result, Tensor) else []
                attrs = " ".join("%s=%s" % (k, call[k]) for k in ("dropout_p", "is_causal", "scale", "enable_gqa")
                                 if k in call)
                kind = self._mask_kind(call.get("attn_mask"))
                if kind:
                    attrs = (attrs + " mask=" + kind).strip()
                if not from_user:
                    attrs = (attrs + " caller=library").strip()
                self._write(_events.python_event(
                    "python_api", "torch.nn.functional.scaled_dot_product_attention", self._pid,
                    threading.get_native_id(), rec.ts(t0), (t1 - t0) / 1000.0, rec.step, rec.module_json,
                    _frames.user_stack_json(frame), attrs, inputs, outputs))
            except Exception as e:
                rec.fail(e)

    def _mask_kind(self, mask):
        """An SDPA mask's kind (FUSE008): "bool"; "zero_inf" for a float mask of 0 and minus
        infinity (or the dtype's lowest value, as transformers writes it): the same as a bool mask;
        "bias" for other values (T5's relative position bias, ALiBi): a bool mask would drop them.
        Values are read on CPU tensors only (a device read would sync), once per mask."""
        if not isinstance(mask, torch.Tensor):
            return ""
        if mask.dtype == torch.bool:
            return "bool"
        if mask.device.type != "cpu" or not mask.is_floating_point():
            return ""
        key = (id(mask), mask._version)
        cached = self._mask_kinds.get(key)
        if cached is not None and cached[0]() is mask:
            return cached[1]
        rec = self._rec
        in_sync, rec.in_sync = rec.in_sync, True
        try:
            with rec.shim_ops():
                low = torch.finfo(mask.dtype).min / 2
                m = mask.detach()
                kind = "zero_inf" if torch._C._TensorBase.item(((m == 0) | (m <= low)).all()) else "bias"
        finally:
            rec.in_sync = in_sync
        if len(self._mask_kinds) > 64:
            self._mask_kinds.clear()
        self._mask_kinds[key] = (weakref.ref(mask), kind)
        return kind

    def record_optimizer(self, optimizer, frame):
        """A zero-length `optimizer_config` event at the start of each recorded optimizer.step():
        the class and its foreach/fused/differentiable settings (None = torch's default)."""
        rec = self._rec
        with no_torch_function(), HEADROOM:
            try:
                defaults = getattr(optimizer, "defaults", {}) or {}
                attrs = " ".join("%s=%s" % (k, defaults[k]) for k in ("foreach", "fused", "differentiable")
                                 if k in defaults)
                self._write(_events.config_event(
                    "optimizer_config", type(optimizer).__module__ + "." + type(optimizer).__qualname__, self._pid,
                    threading.get_native_id(), rec.ts(rec.now()), rec.step, _frames.user_stack_json(frame), attrs))
            except Exception as e:
                rec.fail(e)

    def record_python_event(self, cat, name, reason, tensor, t0, t1, frame, result=None):
        """`tensor`: the call's input; `result`: its output when it made one (a placement's moved
        tensor)."""
        rec = self._rec
        with no_torch_function(), HEADROOM:
            try:
                if not rec.recording:
                    return
                seen_ids, seen_storages = {}, {}
                inputs = [self._tensors.tensor_json(tensor, 0, seen_ids, seen_storages, False)] if tensor is not None else []
                outputs = None
                if result is not None:
                    outputs = [self._tensors.tensor_json(result, 0, seen_ids, seen_storages, True)]
                self._write(_events.python_event(
                    cat, name, self._pid, threading.get_native_id(), rec.ts(t0), (t1 - t0) / 1000.0, rec.step,
                    rec.module_json, _frames.user_stack_json(frame), reason, inputs, outputs))
            except Exception as e:
                rec.fail(e)


_SDPA_PARAMS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")


def _sdpa_call(args, kwargs):
    """F.scaled_dot_product_attention's arguments by name, whichever way they were passed."""
    call = dict(zip(_SDPA_PARAMS, args))
    call.update(kwargs)
    return call
