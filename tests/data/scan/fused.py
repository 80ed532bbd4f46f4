# FUSE101-FUSE105: hand-written versions of fused NPU ops.
import math

import torch
import torch.nn.functional as F
import torch_npu


class RMSNorm(torch.nn.Module):
    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        a = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)  # expect: FUSE101
        b = x / torch.sqrt((x ** 2).mean(dim=-1, keepdim=True) + 1e-6)  # expect: FUSE101
        # LayerNorm (subtracts the mean): not RMSNorm, and never suggest NpuLayerNorm
        c = (x - x.mean(-1, keepdim=True)) * torch.rsqrt((x - x.mean(-1, keepdim=True)).pow(2).mean(-1, keepdim=True) + 1e-5)
        return self.weight * a, b, c, var


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)  # expect: FUSE102


def attention(q, k, v, mask):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))  # k^T: a flag, no copy
    scores = scores.masked_fill(mask == 0, -1e9)
    probs = F.softmax(scores, dim=-1)  # expect: FUSE103
    direct = (q @ k.transpose(-2, -1)).softmax(-1)  # expect: FUSE103
    other = F.softmax(v, dim=-1)  # not attention scores
    return probs @ v, direct, other


def mlp(self, x):
    return self.down(F.silu(self.gate(x)) * self.up(x))  # expect: FUSE104


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))  # expect: FUSE105


def gelu_erf(x):
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))  # expect: FUSE105
