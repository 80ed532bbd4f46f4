"""Running one aten op in emulated low precision, and the helpers the shadow run shares:
argument mapping, output flattening, RNG save/restore.

Emulation keeps tensors float32 (CPU kernels lack many half ops) with values rounded to
the target dtype: inputs rounded, the op computed in fp32 (the NPU's cube units accumulate
in fp32 too), outputs rounded. `x.to(float16).to(float32)` is inf beyond 65504, which is
exactly the overflow a real fp16 run would have.
"""

import torch

from ._errors import pass_on_async

F32 = torch.float32
LOWP_DTYPES = (torch.float16, torch.bfloat16)

# The unpatched methods: the shim's own casts and copies must not be recorded as the
# program's host syncs (_tensor_patches wraps Tensor.to/.cpu while recording).
tensor_to = torch._C._TensorBase.to
tensor_cpu = torch._C._TensorBase.cpu


def round_to(t, dtype):
    return tensor_to(tensor_to(t, dtype), F32)


def map_args(args, kwargs, fn, dtype_fn=None):
    """args/kwargs with every tensor (also inside list arguments) replaced by fn(tensor),
    and every torch.dtype by dtype_fn(dtype) when given."""
    Tensor = torch.Tensor

    def one(a):
        if isinstance(a, Tensor):
            return fn(a)
        if isinstance(a, (list, tuple)):
            if any(isinstance(e, Tensor) for e in a):
                return type(a)(fn(e) if isinstance(e, Tensor) else e for e in a)
            return a
        if dtype_fn is not None and isinstance(a, torch.dtype):
            return dtype_fn(a)
        return a

    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def input_tensors(args, kwargs):
    Tensor = torch.Tensor
    out = []
    for group in (args, kwargs.values()):
        for a in group:
            if isinstance(a, Tensor):
                out.append(a)
            elif isinstance(a, (list, tuple)):
                for e in a:
                    if isinstance(e, Tensor):
                        out.append(e)
    return out


def has_lowp_dtype_arg(args, kwargs):
    for group in (args, kwargs.values()):
        for a in group:
            if isinstance(a, torch.dtype) and a in LOWP_DTYPES:
                return True
    return False


def to_fp32_dtype(d):
    return F32 if d in LOWP_DTYPES else d


def flat_outputs(out):
    """Leaves of an op's result in the recorder's `arg` order (tensors and non-tensors)."""
    if isinstance(out, (list, tuple)):
        leaves = []
        for o in out:
            if isinstance(o, (list, tuple)):
                leaves.extend(o)
            else:
                leaves.append(o)
        return leaves
    return [out]


def map_outputs(out, fn):
    Tensor = torch.Tensor
    if isinstance(out, Tensor):
        return fn(out)
    if isinstance(out, (list, tuple)):
        return type(out)(map_outputs(o, fn) if isinstance(o, (list, tuple, Tensor)) else o for o in out)
    return out


def run_lowp(func, args, kwargs, mutated, dtype, is_lowp, call=None):
    """The op in emulated low precision. Functional ops: fp32 inputs not already rounded
    (`is_lowp(t)`) are rounded, outputs rounded. In-place/out= ops (`mutated` = the
    tensors written): computed as they are, then the written fp32 tensors rounded in
    place, like a half-precision tensor storing an fp32-computed result. `call(func, args,
    kwargs)` runs the op (the dispatch core's call_op), plain `func(*args, **kwargs)` without."""
    if call is None:
        def call(f, a, k):
            return f(*a, **k)
    if mutated:
        out = call(func, args, kwargs)
        for m in mutated:
            if m.dtype == F32:
                m.copy_(round_to(m, dtype))
        return out

    def rnd(t):
        if t.dtype == F32 and not is_lowp(t):
            return round_to(t, dtype)
        return t

    a, k = map_args(args, kwargs, rnd)
    out = call(func, a, k)
    return map_outputs(out, lambda t: round_to(t, dtype) if t.dtype == F32 else t)


# --- RNG: the shadow and local runs replay the real op's random draws --------------------

def rng_save(generators):
    torch_mod = torch
    states = [("cpu", torch_mod.get_rng_state())]
    try:
        if torch_mod.cuda.is_initialized():
            states.append(("cuda", torch_mod.cuda.get_rng_state_all()))
    except Exception as e:
        pass_on_async(e)
    npu = getattr(torch_mod, "npu", None)
    if npu is not None:
        try:
            if npu.is_initialized():
                states.append(("npu", npu.get_rng_state()))
        except Exception as e:
            pass_on_async(e)
    for g in generators:
        states.append((g, g.get_state()))
    return states


def rng_restore(states):
    for who, state in states:
        if who == "cpu":
            torch.set_rng_state(state)
        elif who == "cuda":
            torch.cuda.set_rng_state_all(state)
        elif who == "npu":
            torch.npu.set_rng_state(state)
        else:
            who.set_state(state)


def explicit_generators(args, kwargs):
    gens = []
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, torch.Generator):
            gens.append(a)
    return gens
