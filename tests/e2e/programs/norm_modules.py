"""RMSNorm and LayerNorm as models write them, one class per style (tests/e2e/test_fix_equivalence.py): each
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


class BertLayerNorm(nn.Module):
    """The TF-style LayerNorm of early BERT ports: mean of squared deviations, weight and bias."""

    def __init__(self, hidden_size, eps=1e-12):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.bias = nn.Parameter(torch.zeros(hidden_size))
        self.variance_epsilon = eps

    def forward(self, x):
        u = x.mean(-1, keepdim=True)
        s = (x - u).pow(2).mean(-1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.variance_epsilon)  # NORM: bert_ln
        return self.weight * x + self.bias


class PlainLayerNorm(nn.Module):
    """No affine parameters: torch.var with unbiased=False."""

    def __init__(self, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)  # NORM: plain_ln
        return (x - mean) / torch.sqrt(var + self.eps)


class ZeroCenteredLayerNorm(nn.Module):
    """A zero-centred gamma (Megatron's apply_layernorm_1p): scaled by (1 + weight), then bias."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        normed = (x - mean) * torch.rsqrt(var + self.eps)  # NORM: zero_centered_ln
        return normed * (1 + self.weight) + self.bias


class WeightOnlyLayerNorm(nn.Module):
    """A LayerNorm with a weight and no bias (OLMo-style)."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)  # NORM: weight_only_ln
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight


class StdLayerNorm(nn.Module):
    """The std form of the Annotated Transformer's LayerNorm: unbiased std, eps added to it (not
    to the variance), normalised first and then scaled."""

    def __init__(self, features, eps=1e-6):
        super().__init__()
        self.a_2 = nn.Parameter(torch.ones(features))
        self.b_2 = nn.Parameter(torch.zeros(features))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True)  # NORM: std_ln
        return (x - mean) / (std + self.eps) * self.a_2 + self.b_2


# name -> (class, constructor arguments, the attributes holding its weight, bias and eps)
NORMS = {
    "llama": (LlamaRMSNorm, (16,), "weight", None, "variance_epsilon"),
    "meta": (MetaRMSNorm, (16,), "weight", None, "eps"),
    "gemma": (GemmaRMSNorm, (16,), "weight", None, "eps"),
    "plain": (PlainRMSNorm, (16,), "scale", None, "eps"),
    "weightless": (WeightlessRMSNorm, (), None, None, "eps"),
    "bert_ln": (BertLayerNorm, (16,), "weight", "bias", "variance_epsilon"),
    "plain_ln": (PlainLayerNorm, (), None, None, "eps"),
    "zero_centered_ln": (ZeroCenteredLayerNorm, (16,), "weight", "bias", "eps"),
    "weight_only_ln": (WeightOnlyLayerNorm, (16,), "weight", None, "eps"),
    "std_ln": (StdLayerNorm, (16,), "a_2", "b_2", "eps"),
}
# Forms no fused op computes: their fix says so and gives no code.
NO_CODE = {"std_ln"}


class Net(nn.Module):
    """Each norm in turn between small projections, as a model stacks them."""

    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.ModuleList(nn.Linear(dim, dim) for _ in NORMS)
        self.norms = nn.ModuleList(cls(*args) for cls, args, _, _, _ in NORMS.values())

    def forward(self, x):
        for proj, norm in zip(self.proj, self.norms):
            x = norm(proj(x))
        return x
