import torch
import torch.nn as nn
import torch.nn.functional as F

from common_affinity import DIM, Chain, train


class TwoProj(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w3, self.w2 = nn.Linear(DIM, 32), nn.Linear(DIM, 32), nn.Linear(32, DIM)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))  # VARIANT two_proj 1


class Chunked(nn.Module):
    def __init__(self):
        super().__init__()
        self.w13, self.w2 = nn.Linear(DIM, 64), nn.Linear(32, DIM)

    def forward(self, x):
        a, b = self.w13(x).chunk(2, dim=-1)
        return self.w2(F.silu(a) * b)  # VARIANT chunked 1


class Sigmoid(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w3, self.w2 = nn.Linear(DIM, 32), nn.Linear(DIM, 32), nn.Linear(32, DIM)

    def forward(self, x):
        g = self.w1(x)
        return self.w2(g * torch.sigmoid(g) * self.w3(x))  # VARIANT sigmoid 1


class NotMultiplied(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w2 = nn.Linear(DIM, 32), nn.Linear(32, DIM)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x))) + F.silu(x)  # NEARMISS not_multiplied


if __name__ == "__main__":
    train(Chain(TwoProj(), Chunked(), Sigmoid(), NotMultiplied()), lambda: torch.randn(2, 5, DIM))
