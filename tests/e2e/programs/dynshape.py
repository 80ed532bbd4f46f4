# Planted: the batch's row count changes every step (variable-length data).
import torch

from common import parse_args, train


def step(model, i):
    g = torch.Generator().manual_seed(i)
    rows = 8 + 3 * i
    x = torch.randn(rows, 32, generator=g)
    return model(x).pow(2).mean()  # PLANTED


train(step, parse_args().steps)
