"""A program's own tensor subclasses trained under the capture. argv[1]:
  function  a __torch_function__ subclass (made with as_subclass) that counts the torch calls
            it sees, through a small conv + layer-norm model
  dispatch  a __torch_dispatch__ wrapper subclass that counts the aten ops it runs (the
            pattern of DTensor / float8 / logging tensors), through a two-layer MLP
Prints the calls the subclass saw per step and the final tally: the capture and amp-check's
own work must reach neither (no metadata read, no metric op)."""
import collections
import sys

import torch
import torch.nn as nn

WHAT = sys.argv[1]
T2 = int(torch.__version__.split(".")[0]) >= 2
torch.manual_seed(3)


class Counted(torch.Tensor):
    seen = collections.Counter()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen[getattr(func, "__name__", str(func))] += 1
        return super().__torch_function__(func, types, args, kwargs or {})


class Wrapped(torch.Tensor):
    seen = collections.Counter()

    @staticmethod
    def __new__(cls, elem):
        if T2:
            return torch.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(), dtype=elem.dtype,
                                                       device=elem.device, requires_grad=elem.requires_grad)
        return torch.Tensor._make_subclass(cls, elem, elem.requires_grad)

    def __init__(self, elem):
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.seen[str(func)] += 1

        def unwrap(x):
            return x.elem if isinstance(x, Wrapped) else x

        def wrap(x):
            return Wrapped(x) if isinstance(x, torch.Tensor) and not isinstance(x, Wrapped) else x

        out = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})
        if isinstance(out, (tuple, list)):
            return type(out)(wrap(o) for o in out)
        return wrap(out)


if WHAT == "function":
    model = nn.Sequential(nn.Conv1d(3, 4, 3, padding=1), nn.GELU(), nn.Flatten(), nn.LayerNorm(24), nn.Linear(24, 2))
    make = lambda x: x.as_subclass(Counted)
    seen = Counted.seen
    shape = (5, 3, 6)
else:
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    make = Wrapped
    seen = Wrapped.seen
    shape = (4, 6)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(5):
    x = make(torch.randn(*shape))
    loss = model(x).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step %d calls %d" % (step, sum(seen.values())))
print(sorted(seen.items()))
