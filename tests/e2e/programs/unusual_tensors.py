"""Tensors a dispatch mode cannot carry on torch 1.x: `as_subclass` (even to torch.Tensor, as
parametrization and tensor-subclass libraries do) and named tensors (where torch has them),
named the way argv[1] says: refine (refine_names/rename), factory (names=), setter (x.names =).
Under `run` and `amp-check` the program must print exactly what it prints alone."""
import sys

import torch


class Scaled(torch.Tensor):
    pass


def named_sum(way, x):
    if way == "factory":
        n = torch.zeros(2, 4, names=("N", "C")) + x.detach()
    elif way == "setter":
        n = x.detach().clone()
        n.names = ("N", "C")
    else:
        n = x.detach().refine_names("N", "C")
    return n.sum("C").rename(None).sum()


way = sys.argv[1] if len(sys.argv) > 1 else "refine"
torch.manual_seed(0)
model = torch.nn.Linear(4, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
named = hasattr(torch.Tensor, "refine_names")
for step in range(4):
    x = torch.randn(2, 4)
    loss = model(x.as_subclass(torch.Tensor)).sum() + x.as_subclass(Scaled).as_subclass(torch.Tensor).mean()
    if named:
        loss = loss + named_sum(way, x)
    loss.backward()
    opt.step()
    opt.zero_grad()
    print("step %d loss %.6f" % (step, loss.item()))
