# Planted: a permuted (non-contiguous) tensor fed to softmax and to matmul.
import torch

from common import parse_args, train


def step(model, i):
    g = torch.Generator().manual_seed(i)
    x = torch.randn(8, 16, 32, generator=g)
    h = x.permute(0, 2, 1)  # VIEW
    a = torch.softmax(h, dim=-1)  # PLANTED
    y = model(a.sum(-1))
    return y.pow(2).mean()


train(step, parse_args().steps)
