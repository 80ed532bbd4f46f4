"""Shared harness of the affinity programs: a few training steps of a model whose forward
runs every variant of one pattern. Each variant's line carries `# VARIANT <name> <calls/step>`
(the line the finding must point at); near-misses carry `# NEARMISS <name>`."""

import sys

import torch
import torch.nn as nn

DIM = 16
STEPS = 4


def train(model, make_input, steps=STEPS, optimizer=None):
    torch.manual_seed(0)
    opt = optimizer or torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(steps):
        out = model(make_input())
        loss = out.float().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    print("done", file=sys.stderr)


class Chain(nn.Module):
    """Linear, then each variant in turn (so every variant sees a tensor with a grad)."""

    def __init__(self, *parts):
        super().__init__()
        self.inp = nn.Linear(DIM, DIM)
        self.parts = nn.ModuleList(parts)

    def forward(self, x):
        x = self.inp(x)
        for p in self.parts:
            x = p(x)
        return x
