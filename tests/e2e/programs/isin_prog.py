# Planted: torch.isin (no NPU kernel in some torch_npu lines).
import torch

from common import parse_args, train

SPECIAL = torch.tensor([0, 1])


def step(model, i):
    g = torch.Generator().manual_seed(i)
    x = torch.randn(16, 32, generator=g)
    labels = torch.randint(0, 4, (16,), generator=g)
    keep = ~torch.isin(labels, SPECIAL)  # PLANTED
    return (model(x).pow(2).mean(-1) * keep).mean()


train(step, parse_args().steps)
