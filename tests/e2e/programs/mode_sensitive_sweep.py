"""Every public torch.linalg function, and the torch / Tensor linear algebra beside it, called
on square, symmetric and vector inputs with the orders that reach an SVD, inside a training
step. Their composite kernels ask whether a tensor subclass could be involved (true under any
dispatch mode) and then compute more (singular vectors, eigenvectors), which moves the last
bits of the values. Prints each result's exact bits (float.hex), so a capture that changes one
bit changes the output; `sensitive` on argv prints, instead, the calls whose bits a bare
dispatch mode changes (how _tensor_patches._MODE_SENSITIVE_* was found)."""
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

torch.manual_seed(0)
A = torch.randn(6, 6, dtype=torch.float64)
SYM = A @ A.T + torch.eye(6, dtype=torch.float64)
B = torch.randn(5, 3)
VEC = torch.randn(7)
INPUTS = ((A,), (SYM,), (B,), (VEC,), (A, 2), (A, -2), (A, "nuc"), (B, 2), (SYM, SYM), (B, B))
# lstsq: LAPACK's gelsy gives other last bits for another buffer alignment (a plain run under
# torch.no_grad() already differs), whatever the capture does.
SKIP = {"Tensor", "LinAlgError", "matrix_power", "lstsq"}


def functions():
    for name in sorted(dir(torch.linalg)):
        f = getattr(torch.linalg, name)
        if not name.startswith("_") and name not in SKIP and callable(f):
            yield "linalg." + name, f
    for name in ("svd", "pinverse", "matrix_rank", "nuclear_norm", "norm", "det", "logdet", "slogdet",
                 "inverse", "qr", "trace", "matrix_exp"):
        if hasattr(torch, name):
            yield name, getattr(torch, name)
    for name in ("norm", "logdet", "det", "svd", "pinverse", "inverse"):
        yield "Tensor." + name, getattr(torch.Tensor, name)


def bits(result):
    if isinstance(result, torch.Tensor):
        values = result.detach().reshape(-1).tolist()
        return " ".join(v.hex() if isinstance(v, float) else repr(v) for v in values)
    if isinstance(result, (tuple, list)):
        return " | ".join(bits(r) for r in result)
    return repr(result)


def run_all():
    lines = []
    for label, f in functions():
        for args in INPUTS:
            try:
                out = bits(f(*args))
            except Exception as e:
                out = type(e).__name__
            lines.append("%s%s -> %s" % (label, [tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in args], out))
    return lines


class Bare(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


if sys.argv[1:] == ["sensitive"]:
    plain = run_all()
    with Bare():
        moded = run_all()
    for a, b in zip(plain, moded):
        if a != b:
            print(a.split(" -> ")[0])
    sys.exit(0)

model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
lines = []
for step in range(3):
    loss = model(torch.ones(2, 4)).sum()
    loss.backward()
    if step == 1:   # inside the recorded steps (1:3)
        lines = run_all()
    optimizer.step()
    optimizer.zero_grad()
for line in lines:
    print(line)
