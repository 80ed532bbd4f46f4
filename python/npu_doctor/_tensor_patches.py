"""Hooks installed while steps are recorded (TensorPatches, removed when recording ends):
host-sync Tensor methods (.item(), .cpu(), printing...), placements (`.to(device)`, torch
factories with a device named), torch.cuda.* calls, and the workarounds for what a dispatch
mode changes on some torch versions (mode-sensitive linear algebra, as_subclass, bool
operands, named tensors, the torch 1.x mode stack).

Every wrapper calls the original with the same arguments and returns its result (or lets
its exception through) unchanged; recording happens around it and never raises (but passes
the program's own exceptions on, _errors.py).
"""

import functools
import inspect
import linecache
import re
import sys
import warnings

from ._errors import pass_on, pass_on_async
from ._optimizer_patches import step_depth
from ._transparent import call_from, compiling, keep_builtin, no_torch_function
from . import _frames

# --- host syncs at Python level ----------------------------------------------------------

SYNC_METHODS = {
    "item": "copies one element to the host",
    "cpu": "copies the tensor to the host",
    "tolist": "copies the tensor to the host as Python numbers",
    "numpy": "copies the tensor to the host as a NumPy array",
    "__bool__": "Python control flow on a tensor (if/while/and/or/assert) reads its value on the host",
    "__float__": "float(tensor) reads its value on the host",
    "__int__": "int(tensor) reads its value on the host",
    "__format__": "formatting a tensor (f-string, str.format) copies it to the host",
    "__repr__": "printing a tensor copies it to the host",
    "to": "tensor.to('cpu') copies the tensor to the host",
}


def _optimizer_step_counter(tensor, caller):
    """torch.optim reading its own 0-dim CPU `step` (Adam, AdamW... without capturable):
    the counter stays on the host when the parameters move to the NPU, so the read syncs
    nothing there."""
    try:
        with no_torch_function():
            return tensor.device.type == "cpu" and tensor.dim() == 0 and \
                _frames.is_torch_optimizer_code(caller.f_code)
    except Exception as e:
        pass_on_async(e)
        return False


_CPU_LITERAL = re.compile(r"""(\.to\(\s*|device\s*=\s*)(device\s*=\s*)?(torch\.device\(\s*)?['"]cpu""")
_cpu_lines = {}   # (code, line) -> whether that line names a literal 'cpu' (`.to("cpu")`, `device="cpu"`)


def _non_blocking(args, kwargs):
    """"non_blocking=True|False" of a .to(...) call (keyword, or the bool positional of
    .to(device, dtype, non_blocking) / .to(other, non_blocking)): SYNC001 tells a blocking
    host-to-device copy from an asynchronous one by it."""
    value = kwargs.get("non_blocking")
    if value is None:
        value = next((a for a in args if type(a) is bool), False)
    return "non_blocking=%s" % bool(value)


def _places_on_device(args, kwargs, caller):
    """A `.to(...)` on a CPU run that names a device (`x.to(device)`, `x.to(other)`): where
    the program runs on an NPU it moves the tensor there, unless the call spells out 'cpu'
    (`x.to("cpu")`, `x.to(torch.device("cpu"))`), which stays on the host."""
    import torch
    named = kwargs.get("device") is not None or any(
        isinstance(a, (str, torch.device, torch.Tensor)) for a in args)
    if not named:
        return False   # .to(dtype) only
    key = (caller.f_code, caller.f_lineno)
    literal = _cpu_lines.get(key)
    if literal is None:
        literal = _cpu_lines[key] = bool(_CPU_LITERAL.search(linecache.getline(caller.f_code.co_filename,
                                                                                caller.f_lineno)))
    return not literal


# Found by tests/e2e/programs/mode_sensitive_sweep.py on torch 1.13 and 2.13 (_patch_mode_sensitive).
_MODE_SENSITIVE_LINALG = ("svdvals", "eigvalsh", "eigvals", "cond", "matrix_norm", "norm")
_MODE_SENSITIVE_TORCH = ("logdet", "nuclear_norm", "norm")


class TensorPatches:
    def __init__(self, rec):
        self._rec = rec
        self._saved = []   # (owner, name, had_own_attribute, original)

    def install(self):
        import torch
        cls = torch.Tensor
        for name, reason in SYNC_METHODS.items():
            orig = getattr(cls, name, None)
            if orig is None:
                continue
            own = name in cls.__dict__
            self._saved.append((cls, name, own, cls.__dict__.get(name)))
            setattr(cls, name, self._wrap_tensor_method(orig, name, reason))
        self._patch_as_subclass(cls)
        self._patch_bool_operands(torch)
        self._patch_naming(torch)
        self._patch_data_factories(torch)
        self._patch_mode_sensitive(torch)
        self._patch_mode_stack()
        try:
            import torch.cuda as tc
        except Exception as e:
            pass_on(e)
            return
        for name, obj in list(vars(tc).items()):
            if name.startswith("_") or not inspect.isfunction(obj):
                continue
            if not (getattr(obj, "__module__", "") or "").startswith("torch.cuda"):
                continue   # helpers torch.cuda merely imports (lru_cache...)
            self._saved.append((tc, name, True, obj))
            setattr(tc, name, self._wrap_cuda_function(obj, name))

    def _patch_data_factories(self, torch):
        """torch.tensor / torch.as_tensor of host data with a device named (`device=self.args.device`,
        `device=mask.device`): on an NPU a blocking copy of the data to the device, and device data
        from then on. A CPU run makes a host tensor there, so the call is recorded as a placement
        with its result (a `.to(device)` of data made on the spot); an empty tensor copies nothing
        (the KV cache's torch.tensor([], device=...)).
        Factories that make a tensor from nothing, with a device named outside model code
        (`torch.randint(0, T, (bs,), device=x.device)` of a diffusion loop), make it on the NPU with
        no copy; a CPU run records it as "cpu". Their placement event says "made on the device"
        (SYNC001 counts no copy) and makes the tensor device data for the analysis. Inside a
        module's forward, model code's factories are device data anyway: no event."""
        for name in ("tensor", "as_tensor"):
            self._patch_device_factory(torch, name, "", lambda result: result.numel() > 0)
        for name in ("randint", "randn", "rand", "randperm", "zeros", "ones", "empty", "full", "arange"):
            self._patch_device_factory(torch, name, "made on the device", None)

    def _patch_device_factory(self, torch, name, reason, worth):
        """torch.<name> recording its result as a placement when the call names a device other
        than a literal 'cpu' (`worth(result)`, if given, must hold too; `reason`: the event's)."""
        rec = self._rec
        orig = getattr(torch, name, None)
        if orig is None:
            return
        event_name = "torch.%s(device=)" % name
        in_module_counts = worth is None   # made from nothing: model code's are device data already

        def factory(*args, **kwargs):
            if compiling():
                return orig(*args, **kwargs)
            if kwargs.get("device") is None or not rec.recording or rec.in_sync or step_depth[0] or \
                    (in_module_counts and rec.module_json != '""'):
                return call_from(sys._getframe(1), orig, *args, **kwargs)
            t0 = rec.now()
            result = call_from(sys._getframe(1), orig, *args, **kwargs)
            t1 = rec.now()
            try:
                caller = sys._getframe(1)
                with no_torch_function():
                    placed = isinstance(result, torch.Tensor) and result.device.type == "cpu" and \
                        (worth is None or worth(result)) and _places_on_device((), kwargs, caller)
                if placed:
                    rec.python_calls.record_python_event("placement", event_name, reason, None, t0, t1, caller, result)
            except Exception as e:   # the result's device or size unreadable: not a placement then
                pass_on_async(e)
            return result

        functools.update_wrapper(factory, orig)
        self._saved.append((torch, name, True, orig))
        setattr(torch, name, keep_builtin(factory, orig))

    def _patch_mode_sensitive(self, torch):
        """Linear algebra whose composite kernel asks "could a tensor subclass or a gradient be
        involved?" (isTensorSubclassLike is true under any dispatch mode): svdvals then computes
        the singular vectors too, eigvalsh the eigenvectors, and the values come out in other
        last bits. Under `run` these calls give the program what its plain call gives (the
        capture's mode popped), then run once more under the capture so their ops are recorded
        (pure functions; not with out=). amp-check gives the program its emulated result, as
        for every op. tests/e2e/programs/mode_sensitive_sweep.py finds the set on each torch."""
        if self._rec.amp is not None:
            return
        try:
            from torch.utils._python_dispatch import _get_current_dispatch_mode, _pop_mode_temporarily
        except ImportError:
            return
        rec = self._rec
        entries = [(torch.linalg, n) for n in _MODE_SENSITIVE_LINALG] + \
                  [(torch, n) for n in _MODE_SENSITIVE_TORCH] + [(torch.Tensor, n) for n in _MODE_SENSITIVE_TORCH]
        for owner, name in entries:
            orig = owner.__dict__.get(name) if owner is torch.Tensor else getattr(owner, name, None)
            if orig is None:
                continue

            def call(*args, _orig=orig, **kwargs):
                if compiling():
                    return _orig(*args, **kwargs)
                mode = rec.dispatch_core
                if not rec.recording or mode is None or kwargs.get("out") is not None \
                        or _get_current_dispatch_mode() is not mode:
                    return call_from(sys._getframe(1), _orig, *args, **kwargs)
                with _pop_mode_temporarily():
                    result = call_from(sys._getframe(1), _orig, *args, **kwargs)
                try:
                    with warnings.catch_warnings():   # the program saw this call's warnings once
                        warnings.simplefilter("ignore")
                        recorded = _orig(*args, **kwargs)
                    rec.result_stands_for(result, recorded)
                except Exception as e:   # the recorded second call's failure is the capture's, not the program's
                    pass_on_async(e)
                return result

            functools.update_wrapper(call, orig)
            self._saved.append((owner, name, True, orig))
            setattr(owner, name, keep_builtin(call, orig) if owner is not torch.Tensor else call)

    def _patch_mode_stack(self):
        """torch 1.x keeps the dispatch mode stack in Python: each op pops the mode, runs it and
        pushes it back (`_pop_mode_temporarily`). A signal handler's exception landing between
        the pop and the `try` that pushes it back (or inside the push) loses the capture's mode
        while torch still dispatches to the stack, and the program's next op fails with
        "trying to pop from empty mode stack". The next pop puts the capture's mode back first
        when the stack lost it, and the program goes on as it would without the capture (issue
        42 F-2; tests/e2e/programs/own_exceptions.py). torch >= 2 keeps the stack in C++."""
        try:
            from torch.utils import _python_dispatch as pd
        except ImportError:
            return
        if not hasattr(pd, "_TorchDispatchStackMode") or not callable(getattr(pd, "_pop_mode", None)):
            return
        orig = pd._pop_mode
        rec = self._rec

        def _pop_mode():
            mode = rec.dispatch_core
            if mode is not None and pd._len_torch_dispatch_stack() == 0:
                pd._push_on_torch_dispatch_stack(mode)
            return orig()

        functools.update_wrapper(_pop_mode, orig)
        self._saved.append((pd, "_pop_mode", True, orig))
        pd._pop_mode = _pop_mode

    def _patch_as_subclass(self, cls):
        """torch 1.x: Tensor.as_subclass raises "already associated to a python object" under
        any dispatch mode (the mode's alias output already has its Python object). It makes no
        aten op worth recording, so it runs with dispatch modes off."""
        orig = getattr(cls, "as_subclass", None)
        if not hasattr(cls, "refine_names") or orig is None:
            return
        try:
            from torch.utils._mode_utils import no_dispatch
        except ImportError:
            return

        @functools.wraps(orig)
        def as_subclass(self, *args, **kwargs):
            with no_dispatch():
                return call_from(sys._getframe(1), orig, self, *args, **kwargs)

        self._saved.append((cls, "as_subclass", "as_subclass" in cls.__dict__, cls.__dict__.get("as_subclass")))
        cls.as_subclass = as_subclass

    def _patch_bool_operands(self, torch):
        """torch 1.x hands a dispatch mode a Python bool operand of a bitwise op as the int 1
        (`mask & True` would come back int64, and `x[mask & True]` index by position): while
        recording, these calls pass the bool as a 0-dim bool tensor, which gives what the plain
        call gives. torch >= 2 keeps the bool."""
        if not torch.__version__.startswith("1."):
            return
        cls = torch.Tensor
        names = ("__and__", "__or__", "__xor__", "__rand__", "__ror__", "__rxor__", "__iand__", "__ior__", "__ixor__",
                 "__lshift__", "__rshift__", "__ilshift__", "__irshift__", "bitwise_and", "bitwise_or",
                 "bitwise_xor", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift",
                 "bitwise_right_shift", "bitwise_left_shift_", "bitwise_right_shift_")
        for owner, name in [(cls, n) for n in names] + [(torch, n) for n in names if n.startswith("bitwise")]:
            orig = getattr(owner, name, None)
            if orig is None or name.endswith("_") and owner is torch:
                continue

            def call(*args, _orig=orig, **kwargs):
                if any(type(a) is bool for a in args):
                    args = tuple(torch.tensor(a) if type(a) is bool else a for a in args)
                return call_from(sys._getframe(1), _orig, *args, **kwargs)

            functools.update_wrapper(call, orig)
            own = owner is torch or name in cls.__dict__
            self._saved.append((owner, name, own, orig if own else None))
            setattr(owner, name, keep_builtin(call, orig) if owner is torch else call)

    def _patch_naming(self, torch):
        """torch with named tensors: the ways a program names a tensor (refine_names, rename,
        the names setter, factories with names=) switch the recorder's named-tensor bypass on
        before the first op on a named tensor could raise under the dispatch mode."""
        cls = torch.Tensor
        if not hasattr(cls, "refine_names"):
            return
        rec = self._rec
        for name in ("refine_names", "rename", "rename_"):
            orig = cls.__dict__.get(name)
            if orig is None:
                continue

            def naming(self, *args, _orig=orig, **kwargs):
                rec.enable_named_bypass()
                return call_from(sys._getframe(1), _orig, self, *args, **kwargs)

            functools.update_wrapper(naming, orig)
            self._saved.append((cls, name, True, orig))
            setattr(cls, name, naming)
        base = getattr(torch._C, "_TensorBase", None)
        names = base.__dict__.get("names") if base is not None else None
        if names is not None and "names" not in cls.__dict__:
            def set_names(self, value):
                rec.enable_named_bypass()
                names.__set__(self, value)

            self._saved.append((cls, "names", False, None))
            cls.names = property(names.__get__, set_names, doc=names.__doc__)
        try:
            from torch.utils._mode_utils import no_dispatch
        except ImportError:
            return
        for name in ("empty", "zeros", "ones", "rand", "randn", "full"):
            orig = getattr(torch, name, None)
            if orig is None:
                continue

            def factory(*args, _orig=orig, **kwargs):
                if kwargs.get("names") is None or not rec.recording:
                    return call_from(sys._getframe(1), _orig, *args, **kwargs)
                rec.enable_named_bypass()
                with no_dispatch():
                    return call_from(sys._getframe(1), _orig, *args, **kwargs)

            functools.update_wrapper(factory, orig)
            self._saved.append((torch, name, True, orig))
            setattr(torch, name, keep_builtin(factory, orig))

    def remove(self):
        for owner, name, own, orig in reversed(self._saved):
            try:
                if own:
                    setattr(owner, name, orig)
                else:
                    delattr(owner, name)
            except Exception as e:
                pass_on(e)
        self._saved = []

    def _wrap_tensor_method(self, orig, name, reason):
        rec = self._rec
        event_name = "Tensor.to(cpu)" if name == "to" else "Tensor." + name
        is_to = name == "to"
        is_item = name == "item"
        mutes_ops = name in ("__repr__", "__format__")

        @functools.wraps(orig)
        def wrapper(self, *args, **kwargs):
            if compiling():
                return orig(self, *args, **kwargs)
            if not rec.recording or rec.in_sync:
                return call_from(sys._getframe(1), orig, self, *args, **kwargs)
            if is_item and _optimizer_step_counter(self, sys._getframe(1)):
                with rec.shim_ops():   # nor its aten::_local_scalar_dense
                    return call_from(sys._getframe(1), orig, self, *args, **kwargs)
            rec.in_sync = True   # syncs nested inside (e.g. __repr__ -> item) are one event
            rec.mute_ops = mutes_ops   # printing's own bookkeeping ops are not the program's
            t0 = rec.now()
            try:
                result = call_from(sys._getframe(1), orig, self, *args, **kwargs)
            finally:
                rec.in_sync = False
                rec.mute_ops = False
            t1 = rec.now()
            caller = sys._getframe(1)
            if is_to:
                try:
                    with no_torch_function():
                        devices = result.device.type, self.device.type
                    if devices != ("cpu", "cpu"):
                        if devices[0] == "cpu":   # off a device: a host copy
                            rec.python_calls.record_python_event("python_sync", event_name, reason, self, t0, t1,
                                                                 caller)
                    elif step_depth[0] == 0 and _places_on_device(args, kwargs, caller):
                        # (an optimizer moving its state to its parameters' device: no data upload)
                        rec.python_calls.record_python_event("placement", "Tensor.to(device)",
                                                             _non_blocking(args, kwargs), self, t0, t1, caller, result)
                except Exception as e:   # the devices unreadable: nothing recorded
                    pass_on_async(e)
                return result
            rec.python_calls.record_python_event("python_sync", event_name, reason, self, t0, t1, caller)
            return result

        return wrapper

    def _wrap_cuda_function(self, orig, name):
        rec = self._rec
        is_sync = name == "synchronize"
        cat = "python_sync" if is_sync else "cuda_api"
        event_name = "torch.cuda." + name
        reason = "waits until the device finished all queued work" if is_sync else ""

        @functools.wraps(orig)
        def wrapper(*args, **kwargs):
            if compiling():
                return orig(*args, **kwargs)
            if not rec.recording:
                return call_from(sys._getframe(1), orig, *args, **kwargs)
            caller = sys._getframe(1)
            if not _frames.is_user_frame(caller):   # torch's own calls are not the user's
                return call_from(sys._getframe(1), orig, *args, **kwargs)
            t0 = rec.now()
            result = call_from(sys._getframe(1), orig, *args, **kwargs)
            t1 = rec.now()
            rec.python_calls.record_python_event(cat, event_name, reason, None, t0, t1, caller)
            return result

        return wrapper
