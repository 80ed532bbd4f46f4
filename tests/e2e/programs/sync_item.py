# Planted: loss.item() every step. With --adam the optimizer is Adam(foreach=False), which
# reads its CPU step counter with .item() for every parameter, every step: that counter stays
# on the host when the model moves to the NPU, so it is no sync (the planted line stays the one).
import functools

import torch

from common import parse_args, train


def step(model, i):
    g = torch.Generator().manual_seed(i)
    x = torch.randn(16, 32, generator=g)
    loss = model(x).pow(2).mean()
    if loss.item() > 1e9:  # PLANTED
        print("diverged")
    return loss


args = parse_args()
train(step, args.steps, functools.partial(torch.optim.Adam, foreach=False) if args.adam else torch.optim.SGD)
