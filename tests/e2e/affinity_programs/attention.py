import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from common_affinity import DIM, train

H, S = 2, 6
D = DIM // H


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.register_buffer("mask", torch.ones(S, S, dtype=torch.bool).triu(1))
        self.register_buffer("bias", torch.zeros(S, S).masked_fill(self.mask, -1e4))

    def heads(self, x):
        q, k, v = self.qkv(x).split(DIM, dim=-1)
        return [t.reshape(2, S, H, D).transpose(1, 2) for t in (q, k, v)]

    def forward(self, x):
        q, k, v = self.heads(x)
        att = torch.softmax((q @ k.transpose(-2, -1) / math.sqrt(D)).masked_fill(self.mask, float("-inf")), dim=-1)  # VARIANT div_masked_fill 1
        y1 = att @ v
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(D)) + self.bias
        p = F.dropout(F.softmax(scores, dim=-1), p=0.1, training=True)  # VARIANT mul_add_dropout 1
        y2 = torch.matmul(p, v)
        q3, k3, v3 = (t.reshape(2 * H, S, D) for t in (q * (D ** -0.5), k, v))
        w = F.softmax(torch.bmm(q3, k3.transpose(1, 2)).float(), dim=-1).type_as(q3)  # VARIANT scaled_q_float 1
        y3 = torch.bmm(w, v3).reshape(2, H, S, D)
        probs = torch.softmax(q @ k.transpose(-2, -1), dim=-1).sum(-1, keepdim=True)  # NEARMISS softmax_sum
        y = (y1 + y2 + y3 + probs).transpose(1, 2).reshape(2, S, DIM)
        return y


if __name__ == "__main__":
    train(Attn(), lambda: torch.randn(2, S, DIM))
