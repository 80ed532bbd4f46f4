# FUSE101: RMSNorm as model repositories write it: over two or three statements through a
# variable (transformers Llama/T5, timm), in one expression (Meta's llama), with
# torch.mean / ** 2 / .square() / / torch.sqrt / a norm over sqrt(d), scaled by a weight.
import math

import torch
import torch.nn.functional as F
from torch import nn
import torch_npu


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)  # expect: FUSE101
        return self.weight * hidden_states.to(input_dtype)


class T5LayerNorm(nn.Module):
    def forward(self, hidden_states):
        # T5 uses a layer_norm which only scales and doesn't shift (RMSNorm), in fp32.
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)  # expect: FUSE101
        if self.weight.dtype in [torch.float16, torch.bfloat16]:
            hidden_states = hidden_states.to(self.weight.dtype)
        return self.weight * hidden_states


class RMSNorm(torch.nn.Module):
    """Meta's llama/model.py."""

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)  # expect: FUSE101

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


class GemmaRMSNorm(nn.Module):
    def _norm(self, x):
        return x * torch.rsqrt(torch.mean(x**2, dim=-1, keepdim=True) + self.eps)  # expect: FUSE101

    def forward(self, x):
        output = self._norm(x.float())
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


def timm_rms_norm(x, normalized_shape, weight=None, eps=1e-5):
    """timm layers/fast_norm.py: the square, the mean and the rsqrt in three statements."""
    norm_ndim = len(normalized_shape)
    v = x.pow(2)
    if torch.jit.is_scripting():
        v = torch.mean(v, dim=-1).unsqueeze(-1)
    else:
        dims = tuple(range(-1, -norm_ndim - 1, -1))
        v = torch.mean(v, dim=dims, keepdim=True)
    x = x * torch.rsqrt(v + eps)  # expect: FUSE101
    if weight is not None:
        x = x * weight
    return x


class ScaledRMSNorm(nn.Module):
    def forward(self, x):
        return self.scale * x * torch.rsqrt(x.square().mean(-1, keepdim=True) + self.eps)  # expect: FUSE101


def sqrt_forms(x, eps, gain):
    a = x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)  # expect: FUSE101
    ms = (x * x).mean(-1, keepdim=True)
    b = x * (ms + eps) ** -0.5  # expect: FUSE101
    rms = x.norm(2, dim=-1, keepdim=True) / math.sqrt(x.size(-1))
    c = x / rms * gain  # expect: FUSE101
    rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
    d = x.float() * rstd  # expect: FUSE101
    return a, b, c, d


def not_rms_norm(x, y, eps, weight, bias):
    # LayerNorm subtracts the mean first: not RMSNorm (and never NpuLayerNorm).
    mean = x.mean(-1, keepdim=True)
    xc = x - mean
    var = (xc**2).mean(-1, keepdim=True)
    ln = xc * torch.rsqrt(var + eps) * weight + bias
    # Normalised by another tensor's RMS.
    other = y * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    # L2 normalisation (F.normalize), not RMS.
    unit = x / x.norm(dim=-1, keepdim=True)
    # The variance of x, not its mean square.
    std = x * torch.rsqrt(x.var(-1, keepdim=True) + eps)
    return ln, other, unit, std, F.layer_norm(x, x.shape[-1:])
