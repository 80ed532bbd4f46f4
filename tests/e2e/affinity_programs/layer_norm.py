import torch
import torch.nn as nn

from common_affinity import DIM, Chain, train


class VarForm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(DIM))
        self.bias = nn.Parameter(torch.zeros(DIM))

    def forward(self, x):
        return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + 1e-5) * self.weight + self.bias  # VARIANT var 1


class Centred(nn.Module):
    def forward(self, x):
        d = x - x.mean(-1, keepdim=True)
        return d * torch.rsqrt((d ** 2).mean(-1, keepdim=True) + 1e-5)  # VARIANT centred_rsqrt 1


class StdForm(nn.Module):
    def forward(self, x):
        return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)  # VARIANT std 1


class MeanPow(nn.Module):
    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / (var + 1e-5).sqrt()  # VARIANT mean_pow 1


class NoSqrt(nn.Module):
    def forward(self, x):
        return (x - x.mean(-1, keepdim=True)) / (x.abs().mean(-1, keepdim=True) + 1e-5)  # NEARMISS no_sqrt


if __name__ == "__main__":
    train(Chain(VarForm(), Centred(), StdForm(), MeanPow(), NoSqrt(), nn.LayerNorm(DIM)),
          lambda: torch.randn(2, 5, DIM))
