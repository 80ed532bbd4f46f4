"""The one aten-level hook every shim feature rides on: a TorchDispatchMode that sees each op
the dispatcher runs, records it, and hands it to the features the recorder declared
(_features.py: amp-check's shadow run, the tensor dump). One core, so that capture, amp-check
and dump see the same ops the same way (the same composite expansion, the same call of the
op, the same frames).

PyTorch disables the mode while its __torch_dispatch__ runs, so the op itself (and any tensor
call the recorder makes) does not come back here. The recorder only reads tensor metadata,
which runs no op at all.

Ops whose only kernel is a CompositeExplicitAutograd one (torch.logcumsumexp calls
aten::_logcumsumexp) run that kernel with the mode back on, so the kernel ops they call are
recorded too, nested in the op: on an NPU those are what must have a kernel.

Threads: on a device (CUDA, NPU) the backward pass runs on the autograd engine's device
thread, which has no Python frame of the program's: `frame` is None there and the op is
attributed through its autograd node (_autograd.py). Nesting depth is per thread.
"""

import sys
import threading

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ._advice import advice
from ._errors import HEADROOM, pass_on
from ._frames import dispatch_caller
from ._transparent import no_torch_function

_EXPLICIT_KEYS = [getattr(torch._C.DispatchKey, k) for k in
                  ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd")
                  if hasattr(torch._C.DispatchKey, k)]
_BACKEND_KEYS = [getattr(torch._C.DispatchKey, k) for k in ("CPU", "CUDA") if hasattr(torch._C.DispatchKey, k)]
_has_kernel = getattr(torch._C, "_dispatch_has_kernel_for_dispatch_key", None)
_TORCH_1 = torch.__version__.startswith("1.")

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

_SCALARS = (int, float, bool, complex)
_tracing_state = getattr(torch._C, "_get_tracing_state", lambda: None)
_set_tracing_state = getattr(torch._C, "_set_tracing_state", lambda state: None)


class OpFacts:
    """What the core needs to know about one OpOverload, computed once: its name as the
    knowledge base spells it ("" for profiler bookkeeping), the dispatch facts of the torch
    that runs (written into the capture once per op: docs/formats/capture.md "Dispatch facts"),
    the composite key to expand it at, and where its schema takes Tensors."""
    __slots__ = ("name", "dispatch", "cpu_kernel", "expand_key", "tensor_slots", "bool_scalar_slots", "_siblings")

    def __init__(self, func):
        schema = func._schema
        overload = func._overloadname
        name = schema.name if overload == "default" else schema.name + "." + overload
        self.name = "" if name.startswith("profiler::") else name
        self.dispatch, self.cpu_kernel = _dispatch_facts(name)
        self.expand_key = _expand_key(func, name, self.dispatch, self.cpu_kernel)
        slots, bools = [], []
        for i, a in enumerate(schema.arguments):
            type_text = str(a.type)
            key = a.name if a.kwarg_only else i
            if type_text in ("Tensor", "Tensor?", "Optional[Tensor]"):
                slots.append(key)
            elif type_text in ("Scalar", "Scalar?", "Optional[number]", "number"):
                bools.append(key)
        self.tensor_slots = tuple(slots)
        self.bool_scalar_slots = tuple(bools) if _TORCH_1 else ()
        self._siblings = {}

    def scalar_sibling(self, func, numbers):
        """_find_scalar_sibling, once per op and set of number slots."""
        try:
            return self._siblings[numbers]
        except KeyError:
            op = self._siblings[numbers] = _find_scalar_sibling(func, numbers)
            return op


def _dispatch_facts(name):
    """("E" | "N" | "B" | "", has a CPU kernel): docs/knowledge.md "Dispatch facts per torch"."""
    if _has_kernel is None or not name:
        return "", False
    try:
        cpu = _has_kernel(name, "CPU")
        if _has_kernel(name, "CompositeExplicitAutograd"):
            return "E", cpu
        if _has_kernel(name, "CompositeExplicitAutogradNonFunctional"):
            return "N", cpu
        return "B", cpu
    except Exception as e:
        pass_on(e)
        return "", False


def _expand_key(func, name, dispatch, cpu_kernel):
    """The composite key to run `func` at so its inner ops are seen, or None: the op has a
    CompositeExplicitAutograd kernel and no CPU/CUDA kernel of its own, and returns no view
    (views and detach only re-wrap their input, detach by calling itself)."""
    base = name.split("::")[-1].split(".")[0] if name else ""
    if dispatch not in ("E", "N") or cpu_kernel or not base or base in _PLAIN_COMPOSITES \
            or base.startswith(_BACKEND_FAMILIES) or not hasattr(func, "_op_dk"):
        return None
    try:
        if any(r.alias_info is not None for r in func._schema.returns):
            return None
        if any(_has_kernel(name, k) for k in _BACKEND_KEYS):
            return None
        for k in _EXPLICIT_KEYS:
            if _has_kernel(name, k):
                return k
    except Exception as e:
        pass_on(e)
    return None


def call_op(func, facts, args, kwargs):
    """Runs `func` the way the program's own call would have run it. A Python number can sit
    where the schema says Tensor: composite kernels pass wrapped scalars (`remainder.Scalar`
    calling `remainder.Tensor`), the TorchScript interpreter passes a traced constant (`t * 2`
    traced), and the Python key hands such wrapped-number tensors to the mode as numbers,
    which the op object refuses. The op's own Scalar sibling takes them where it has one (the
    overload the program's call would have picked); elsewhere the number goes back as the 0-dim
    tensor it was. Torch 1.x's op objects also read a bool Scalar as an int
    (`bitwise_and.Scalar(mask, True)` would come back int64): there a bool always goes as a
    0-dim bool tensor to the Tensor overload, as torch's own kernel sends it."""
    numbers = _number_slots(facts, args, kwargs)
    if numbers:
        if not (_TORCH_1 and any(type(_at(args, kwargs, slot)) is bool for slot in numbers)):
            sibling = facts.scalar_sibling(func, numbers)
            if sibling is not None:
                return sibling(*args, **kwargs)
        return _numbers_as_tensors(func, numbers, args, kwargs)
    for slot in facts.bool_scalar_slots:
        if isinstance(slot, int) and slot < len(args) and type(args[slot]) is bool:
            return _bool_as_tensor(func, args, kwargs, slot)
    return func(*args, **kwargs)


def _at(args, kwargs, slot):
    if isinstance(slot, int):
        return args[slot] if slot < len(args) else None
    return kwargs.get(slot) if kwargs else None


def _number_slots(facts, args, kwargs):
    """The Tensor slots of this call that hold a Python number."""
    return tuple(slot for slot in facts.tensor_slots if type(_at(args, kwargs, slot)) in _SCALARS)


def _find_scalar_sibling(func, numbers):
    """The overload of `func`'s packet with the same arguments whose type is Scalar at each
    of `numbers` and Tensor at every other Tensor slot (remainder.Scalar for remainder.Tensor
    with a number as `other`, where.ScalarOther...), or None."""
    mine = func._schema.arguments
    names = [a.name for a in mine]
    packet = func.overloadpacket
    try:
        for overload in packet.overloads():
            op = getattr(packet, overload)
            theirs = op._schema.arguments
            if op is func or [a.name for a in theirs] != names:
                continue
            fits = True
            for i, (a, b) in enumerate(zip(mine, theirs)):
                slot = a.name if a.kwarg_only else i
                want = _SCALAR_TYPES if slot in numbers else (str(a.type),)
                if str(b.type) not in want:
                    fits = False
                    break
            if fits:
                return op
    except Exception as e:
        pass_on(e)
    return None


_SCALAR_TYPES = ("Scalar", "Scalar?", "Optional[number]", "number")


def _numbers_as_tensors(func, numbers, args, kwargs):
    """`func` with each number in `numbers` as a 0-dim tensor standing in for the wrapped
    number it was."""
    args = list(args)
    kwargs = dict(kwargs) if kwargs else {}
    for slot in numbers:
        if isinstance(slot, int):
            args[slot] = _number_tensor(args[slot])
        else:
            kwargs[slot] = _number_tensor(kwargs[slot])
    return func(*args, **kwargs)


def _number_tensor(value):
    """A wrapped number promotes like a number: across categories (int tensor - 0.5) the result
    takes the default dtype, which a 0-dim tensor of that dtype also gives."""
    if type(value) is float:
        return torch.tensor(value, dtype=torch.get_default_dtype())
    if type(value) is complex:
        return torch.tensor(value, dtype=torch.complex128 if torch.get_default_dtype() is torch.float64
                            else torch.complex64)
    return torch.tensor(value)


def _bool_as_tensor(func, args, kwargs, slot):
    overload = func._overloadname
    sibling = {"Scalar": "Tensor", "Tensor_Scalar": "Tensor", "Scalar_Tensor": "Tensor",
               "Scalar_out": "Tensor_out"}.get(overload)
    target = getattr(func.overloadpacket, sibling, None) if sibling else None
    if target is None:
        return func(*args, **kwargs)
    args = list(args)
    args[slot] = torch.tensor(args[slot])
    return target(*args, **kwargs)


class _Depth(threading.local):
    value = 0     # nesting of __torch_dispatch__ calls on this thread
    site = None   # the _recorder.Site of the outermost op running on this thread


class DispatchCore(TorchDispatchMode):
    """`recorder`: the _recorder.Recorder that writes events; `features`: the _features.Features
    it declared (amp-check's session, the tensor dump)."""

    def __init__(self, recorder, features):
        super().__init__()
        self._rec = recorder
        self._features = features
        self._amp = features.amp
        self._facts = {}
        self._expanding = []   # ops whose composite kernel runs now (an op that calls itself runs plainly)
        self.depth = _Depth()  # nesting of __torch_dispatch__ calls on this thread

    @classmethod
    def ignore_compile_internals(cls):
        """torch.compile'd code keeps running compiled while the capture records (torch asks each
        mode from 2.9 on): a mode that says False makes it fall back to eager ops, whose last
        bits differ from the compiled kernels' (issue 42 F-3).
        The compiled code's ops that go through the dispatcher (extern kernels: mm, addmm,
        convolution) are recorded; what its generated kernels fuse is not."""
        return True

    def facts(self, func):
        f = self._facts.get(func)
        if f is None:
            f = self._facts[func] = OpFacts(func)
            if f.name:
                self._rec.note_op_facts(f)
        return f

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        # a program's __torch_function__ subclass sees neither the capture's metadata reads nor
        # the op's own call (a plain run calls no __torch_function__ below the Python key);
        # the shim's frames get room above the program's recursion limit (issue 42 F-7)
        with no_torch_function(), HEADROOM:
            return self._dispatch(func, args, kwargs, sys._getframe(1))

    def _dispatch(self, func, args, kwargs, outer):
        """`outer`: the frame that called __torch_dispatch__ (torch's wrappers, then the op's caller)."""
        if kwargs is None:
            kwargs = {}
        if _tracing_state() is not None:
            return self._traced(func, args, kwargs, outer)
        rec = self._rec
        depth = self.depth
        if rec.cut_at_forward and depth.value == 0:
            rec.forward_may_start(func, args)
        if not rec.recording or rec.mute_ops:
            return call_op(func, self.facts(func), args, kwargs)
        depth.value += 1
        try:
            return self._record(func, args, kwargs, depth.value, outer)
        finally:
            depth.value -= 1

    def _traced(self, func, args, kwargs, outer):
        """torch.jit.trace has already recorded this op in its graph (the Tracer key runs before
        the Python one): the op runs with the tracer paused, so nothing the capture does here
        (a number turned back into a tensor) becomes part of the program's traced graph."""
        state = _tracing_state()
        _set_tracing_state(None)
        try:
            return self._dispatch(func, args, kwargs, outer)
        finally:
            _set_tracing_state(state)

    def _record(self, func, args, kwargs, depth, outer):
        rec = self._rec
        amp = self._amp
        pre = plan = facts = site = None
        expand = False
        try:
            facts = self.facts(func)
            if facts.name:
                expand = facts.expand_key is not None and func not in self._expanding and _dense_inputs(args) \
                    and not (_TORCH_1 and _has_bool(args))
                if depth == 1:
                    frame = dispatch_caller(outer)   # None on the autograd device thread
                    site = self.depth.site = rec.op_site(frame)
                else:   # an op inside an expanded composite kernel: the enclosing op's call
                    site = self.depth.site
                if amp is not None:
                    plan = amp.plan(func, facts, args, kwargs, site, expand)
                    if plan.calls:
                        pre = rec.op_inputs(args, kwargs)
                else:
                    pre = rec.op_inputs(args, kwargs)
        except Exception as e:
            rec.fail(e, facts.name if facts is not None else "")
            pre = plan = None
        if pre is None and plan is None:
            return call_op(func, facts or self.facts(func), args, kwargs)
        t0 = rec.now()
        if expand:
            out = self._expand(func, facts, args, kwargs)
        elif plan is not None:
            out = amp.run_real(plan)   # the program's own exceptions pass through
        else:
            out = call_op(func, facts, args, kwargs)
        t1 = rec.now()
        if rec.recording:
            try:
                extra = amp.mirror(plan, out) if plan is not None else ""
                if pre is not None:
                    rec.op_done(facts.name, func, pre, out, t0, t1, site, depth, extra)
                dump = self._features.dump
                if dump is not None:
                    dump.on_op_output(facts.name, out)
            except Exception as e:
                rec.fail(e, facts.name)
        return out

    def _expand(self, func, facts, args, kwargs):
        """Runs the op's composite kernel with this mode on, so its inner ops are recorded.
        Should that raise for a functional op, the op runs plainly: if the plain run raises
        too, the error is the program's own; if not, the op is never expanded again. An op
        that writes into its arguments is not run twice (the expansion may have written)."""
        self._expanding.append(func)
        try:
            with self:   # the kernel's own aten calls come back here, nested in this op
                return func._op_dk(facts.expand_key, *args, **kwargs)
        except Exception as e:
            pass_on(e)   # the program's (its signal handler's): not a reason to run the op again
            if _writes_arguments(func):
                raise
            error = e
        finally:
            self._expanding.pop()
        out = call_op(func, facts, args, kwargs)
        facts.expand_key = None
        self._rec.note_once("expand:" + facts.name, advice("capture", "not_expanded", op=facts.name,
                                                           error=type(error).__name__, message=error))
        return out


def _has_bool(args):
    """torch 1.x passes a composite kernel's wrapped bool to the mode as an int: such calls run
    whole (unexpanded), as the program's own call ran them."""
    return any(type(a) is bool for a in args)


def _writes_arguments(func):
    try:
        return any(a.alias_info is not None and a.alias_info.is_write for a in func._schema.arguments)
    except Exception as e:
        pass_on(e)
        return True


_PLAIN_DISPATCH = torch.Tensor.__torch_dispatch__


def plain_tensor(t, device_tensors=False):
    """Strided, not quantized, not of a subclass with its own __torch_dispatch__ (DTensor,
    float8 and wrapper tensors): sparse, quantized and such tensors implement ops of their
    own, which neither a composite kernel run below the Python key nor amp-check's own
    computations may replace or reach."""
    cls = type(t)
    return t.layout == torch.strided and not t.is_quantized and \
        (cls is torch.Tensor or cls is torch.nn.Parameter or
         getattr(cls, "__torch_dispatch__", _PLAIN_DISPATCH) is _PLAIN_DISPATCH or
         (device_tensors and getattr(cls, "npu_doctor_device_tensor", False)))


# A device backend written in Python (tests/e2e/device_programs/fake_npu.py) keeps its
# tensors in a wrapper subclass; `npu_doctor_device_tensor = True` on that class says they are
# the device's own tensors, which amp-check measures like any plain tensor (device_tensors=True;
# composite kernels are still never run below the Python key for them).


def _dense_inputs(args):
    """At least one tensor input, every one a plain_tensor."""
    Tensor = torch.Tensor
    seen = False
    for a in args:
        items = a if isinstance(a, (list, tuple)) else (a,)
        for t in items:
            if isinstance(t, Tensor):
                if not plain_tensor(t):
                    return False
                seen = True
    return seen


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
    (_tensor_patches.py watches the ways to do that). (Tensor.as_subclass: _tensor_patches.py.)"""
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
                recorder.note_once("named", advice("capture", "named_tensors"))
                with no_dispatch():
                    return func(*args, **kwargs)
            return func(*args, **kwargs)

    return _Bypass()
