"""RMSNorm as models write it, one class per style (tests/e2e/test_fix_equivalence.py): each
`# NORM: name` line is where npu-doctor anchors the FUSE001 finding of that module."""
import torch
import torch.nn as nn


class LlamaRMSNorm(nn.Module):
    """transformers' LlamaRMSNorm: float32 statistics, weight applied in the input dtype."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)  # NORM: llama
        return self.weight * hidden_states.to(input_dtype)


class MetaRMSNorm(nn.Module):
    """Meta's llama reference: _norm then `* self.weight`."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)  # NORM: meta

    def forward(self, x):
        return self._norm(x.float()).type_as(x) * self.weight


class GemmaRMSNorm(nn.Module):
    """transformers' GemmaRMSNorm: a zero-initialised weight, scaled by (1 + weight)."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)  # NORM: gemma

    def forward(self, x):
        output = self._norm(x.float())
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


class PlainRMSNorm(nn.Module):
    """A tutorial's form: divide by the root of the mean square."""

    def __init__(self, dim, eps=1e-8):
        super().__init__()
        self.eps = eps
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        rms = torch.sqrt((x * x).sum(-1, keepdim=True) / x.shape[-1] + self.eps)  # NORM: plain
        return self.scale * (x / rms)


class WeightlessRMSNorm(nn.Module):
    """A qk-norm without an affine weight."""

    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)  # NORM: weightless


# name -> (class, constructor arguments, the attribute holding its weight, the one holding eps)
NORMS = {
    "llama": (LlamaRMSNorm, (16,), "weight", "variance_epsilon"),
    "meta": (MetaRMSNorm, (16,), "weight", "eps"),
    "gemma": (GemmaRMSNorm, (16,), "weight", "eps"),
    "plain": (PlainRMSNorm, (16,), "scale", "eps"),
    "weightless": (WeightlessRMSNorm, (), None, "eps"),
}


class Net(nn.Module):
    """Each norm in turn between small projections, as a model stacks them."""

    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.ModuleList(nn.Linear(dim, dim) for _ in NORMS)
        self.norms = nn.ModuleList(cls(*args) for cls, args, _, _ in NORMS.values())

    def forward(self, x):
        for proj, norm in zip(self.proj, self.norms):
            x = norm(proj(x))
        return x
