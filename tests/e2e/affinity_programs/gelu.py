import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from common_affinity import DIM, Chain, train


class TanhPow(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))  # VARIANT tanh_pow 1


class TanhCube(nn.Module):
    def forward(self, x):
        return x * 0.5 * (torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)) + 1.0)  # VARIANT tanh_cube 1


class Erf(nn.Module):
    def forward(self, x):
        return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))  # VARIANT erf 1


class ErfMul(nn.Module):
    def forward(self, x):
        return 0.5 * (1 + torch.erf(x * 0.7071067811865476)) * x  # VARIANT erf_mul 1


class NotGelu(nn.Module):
    def forward(self, x):
        return torch.tanh(x) * x + x * torch.tanh(F.softplus(x))  # NEARMISS tanh_times_x


if __name__ == "__main__":
    train(Chain(TanhPow(), TanhCube(), Erf(), ErfMul(), NotGelu(), nn.GELU()), lambda: torch.randn(2, 5, DIM))
