import torch
import torch.nn as nn

from common_affinity import DIM, Chain, train


class Llama(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(DIM))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(variance + 1e-6) * self.weight  # VARIANT llama 2


class T5(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(DIM))

    def forward(self, x):
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + 1e-6)  # VARIANT t5 1
        return self.weight * x.to(torch.float32)


class SumNumel(nn.Module):
    def forward(self, x):
        return x / torch.sqrt((x * x).sum(-1, keepdim=True) / x.shape[-1] + 1e-6)  # VARIANT sum_numel 1


class Reciprocal(nn.Module):
    def forward(self, x):
        return x * (1.0 / torch.sqrt(torch.mean(torch.square(x), dim=-1, keepdim=True) + 1e-5))  # VARIANT recip 1


class NoRsqrt(nn.Module):
    def forward(self, x):
        return x / (x.pow(2).mean(-1, keepdim=True) + 1e-6)  # NEARMISS no_sqrt


if __name__ == "__main__":
    llama = Llama()
    train(Chain(llama, T5(), SumNumel(), Reciprocal(), NoRsqrt(), llama), lambda: torch.randn(2, 5, DIM))
