"""How the shim stays out of the program's sight while it runs inside the program's calls.

- Its reads of tensor metadata (shape, strides, data_ptr, device) never reach a program's
  `__torch_function__` subclass: they run under `no_torch_function()`.
- Warnings torch raises inside a call the shim wraps (`float(t)` on a tensor that requires
  grad, `torch.tensor(t)` of a tensor) point at the program's line, as without the shim:
  `call_from(frame, fn, ...)` runs `fn` from a one-line trampoline whose code carries the
  program's file, line and module globals (warning filters and `__warningregistry__` match).
- torch.compile traces the Python functions that compiled code calls, the shim's module hooks
  and wrappers among them: each asks `compiling()` first and hands over to the original at
  once, so what dynamo traces is the program's own code, and its graph (and so its kernels,
  and their last bits) the plain run's (issue 42 F-3).
- Scripted code (TorchScript) that calls a torch function the shim wraps still compiles:
  `keep_builtin(wrapper, orig)` registers the wrapper under the original's builtin name.
"""

import types

import torch

from . import _frames
from ._errors import pass_on

no_torch_function = getattr(torch._C, "DisableTorchFunctionSubclass", None) or torch._C.DisableTorchFunction
# True while dynamo traces (where torch has it; else dynamo traces the shim's code as it is)
compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)


def _trampoline(fn, args, kwargs): return fn(*args, **kwargs)  # noqa: E704 (one line: one line number)


_TRAMPOLINE = _trampoline.__code__
_trampolines = {}   # (file, line, id(globals)) -> function; a function holds its globals, so ids stay unique


def call_from(frame, fn, *args, **kwargs):
    """fn(*args, **kwargs), called as if from `frame`'s current line."""
    if frame is None:
        return fn(*args, **kwargs)
    code = frame.f_code
    key = (code.co_filename, frame.f_lineno, id(frame.f_globals))
    t = _trampolines.get(key)
    if t is None:
        if len(_trampolines) > 4096:
            _trampolines.clear()
        t = _trampolines[key] = types.FunctionType(
            _TRAMPOLINE.replace(co_filename=code.co_filename, co_firstlineno=frame.f_lineno or 1,
                                co_name=code.co_name), frame.f_globals)
        _frames.never_the_users(t.__code__)   # recorded stacks skip it: the program's frame follows
    return t(fn, args, kwargs)


_builtin_wrappers = []   # kept alive: TorchScript's builtin table is keyed by id()


def keep_builtin(wrapper, orig):
    """TorchScript compiles a call of a function it knows as a builtin (torch.zeros ->
    aten::zeros, torch.autograd.grad -> aten::grad) by the function's identity: a wrapper that
    stands in for one must be known under the same name, or scripted code calling it stops
    compiling. The first lookup builds torch's table from the functions torch has then, so it
    runs before the wrapper is installed (every patch calls this first)."""
    try:
        from torch.jit._builtins import _find_builtin, _register_builtin
        name = _find_builtin(orig)
        if name:
            _register_builtin(wrapper, name)
            _builtin_wrappers.append(wrapper)
    except Exception as e:
        pass_on(e)
    return wrapper

