"""A device for CPU tests: torch's PrivateUse1 backend named "npu", registered from Python
(torch.utils.backend_registration, torch >= 2.5), with tensors that keep their data on the
CPU inside a wrapper subclass reporting device npu:0.

What it reproduces is what only a real accelerator showed before: the autograd engine runs
the backward pass of device tensors on its own device thread, which has no Python frame of
the program's (the capture shim must attribute those ops through their autograd nodes), and
`torch.npu.is_available()` is True. It does not reproduce device kernels.

    import fake_npu
    model = fake_npu.to_device(MyModel())
    x = fake_npu.tensor(torch.randn(8, 16))
"""

import torch
from torch.utils._pytree import tree_map
from torch.utils.backend_registration import _setup_privateuseone_for_python_backend



class _BackendModule:
    """torch.npu, as torch_npu would register it (what the shim and autocast ask of it)."""

    def is_initialized(self):
        return True

    def is_available(self):
        return True

    def current_device(self):
        return 0

    def device_count(self):
        return 1

    def _is_in_bad_fork(self):
        return False

    def manual_seed_all(self, seed):
        pass

    def get_amp_supported_dtype(self):
        return [torch.float16, torch.bfloat16]


_setup_privateuseone_for_python_backend("npu", backend_module=_BackendModule())
DEVICE = torch.device("npu:0")


class NpuTensor(torch.Tensor):
    npu_doctor_device_tensor = True   # the device's own tensors, not a program's subclass (npu_doctor._dispatch)

    @staticmethod
    def __new__(cls, data):
        return torch.Tensor._make_wrapper_subclass(cls, data.shape, strides=data.stride(), dtype=data.dtype,
                                                   device=DEVICE, storage_offset=data.storage_offset(),
                                                   requires_grad=False)

    def __init__(self, data):
        self.data_ = data

    def __repr__(self):
        return "NpuTensor(%r)" % (self.data_,)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(x):
            if isinstance(x, NpuTensor):
                return x.data_
            if isinstance(x, torch.device) and x.type == "npu":
                return torch.device("cpu")
            return x

        to_host = func is torch.ops.aten._to_copy.default and kwargs and kwargs.get("device") is not None \
            and torch.device(kwargs["device"]).type == "cpu"
        a = tree_map(unwrap, args)
        k = tree_map(unwrap, kwargs or {})
        if k.get("device") is not None and str(k["device"]).startswith("npu"):
            k["device"] = torch.device("cpu")
        out = func(*a, **k)
        if func is torch.ops.aten._local_scalar_dense.default or to_host:
            return out   # a copy to the host: a plain CPU tensor
        return tree_map(lambda x: NpuTensor(x) if isinstance(x, torch.Tensor) and not isinstance(x, NpuTensor) else x,
                        out)


# Factories with device="npu" (torch.empty(n, device=x.device)) dispatch to the backend itself.
_lib = torch.library.Library("aten", "IMPL")


def _empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return NpuTensor(torch.empty(size, dtype=dtype, layout=layout, device="cpu", memory_format=memory_format))


def _empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    return NpuTensor(torch.empty_strided(size, stride, dtype=dtype, layout=layout, device="cpu"))


_lib.impl("empty.memory_format", _empty, "PrivateUse1")
_lib.impl("empty_strided", _empty_strided, "PrivateUse1")


# Autocast on the device, as torch_npu registers it: every op falls through, except a few that
# run in the autocast dtype (matmuls) or in fp32 (softmax, norms), like its lists say.
_any = torch.library.Library("_", "IMPL")
_any.fallback(torch.library.fallthrough_kernel, dispatch_key="AutocastPrivateUse1")
_AUTOCAST_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastPrivateUse1)


def _autocast_kernel(op, to_lowp):
    def kernel(*args, **kwargs):
        dtype = torch.get_autocast_dtype("npu") if to_lowp else torch.float32

        def cast(x):
            return x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x

        with torch._C._ExcludeDispatchKeyGuard(_AUTOCAST_KEYS):
            return op(*tree_map(cast, args), **tree_map(cast, kwargs))
    return kernel


for _name, _lowp in (("mm", True), ("addmm", True), ("bmm", True), ("baddbmm", True), ("linear", True),
                     ("matmul", True), ("softmax.int", False), ("log_softmax.int", False),
                     ("layer_norm", False)):
    _base, _, _overload = _name.partition(".")
    _op = getattr(getattr(torch.ops.aten, _base), _overload or "default")
    _lib.impl(_name, _autocast_kernel(_op, _lowp), "AutocastPrivateUse1")


def tensor(data):
    return NpuTensor(data)


def to_device(module):
    """Moves a module's parameters and buffers onto the fake device (in place)."""
    for m in module.modules():
        for name, p in list(m._parameters.items()):
            if p is not None:
                m._parameters[name] = torch.nn.Parameter(NpuTensor(p.detach()), requires_grad=p.requires_grad)
        for name, b in list(m._buffers.items()):
            if b is not None:
                m._buffers[name] = NpuTensor(b)
    return module
