# Planted: loss.item() every step.
import torch

from common import parse_args, train


def step(model, i):
    g = torch.Generator().manual_seed(i)
    x = torch.randn(16, 32, generator=g)
    loss = model(x).pow(2).mean()
    if loss.item() > 1e9:  # PLANTED
        print("diverged")
    return loss


train(step, parse_args().steps)
