"""Per-parameter optimizer loops: argv[1] picks the optimizer."""
import sys

import torch
import torch.nn as nn

from common_affinity import DIM, train


def make(kind, params):
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=1e-3, foreach=False)  # VARIANT adamw
    if kind == "adam":
        return torch.optim.Adam(params, lr=1e-3, foreach=False)  # VARIANT adam
    if kind == "sgd_momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9, weight_decay=1e-4, foreach=False)  # VARIANT sgd_momentum
    if kind == "default":
        return torch.optim.AdamW(params, lr=1e-3)  # defaults: foreach on NPU from torch 2.1
    return torch.optim.AdamW(params, lr=1e-3, foreach=True)  # NEARMISS foreach


if __name__ == "__main__":
    model = nn.Sequential(*[nn.Linear(DIM, DIM) for _ in range(3)])   # 6 parameters
    opt = make(sys.argv[1], model.parameters())
    train(model, lambda: torch.randn(4, DIM), optimizer=opt)  # STEP
