# FUSE104: gated MLPs as model repositories write them: the activation behind a module
# attribute set in __init__ (transformers ACT2FN[config.hidden_act], nn.SiLU(), F.silu), a
# local name, a chunk of one fused gate/up projection (Phi-3), or over statements (T5).
import torch
import torch.nn.functional as F
from torch import nn
import torch_npu

from transformers.activations import ACT2FN


class LlamaMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, x):
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))  # expect: FUSE104
        return down_proj


class FeedForward(nn.Module):
    """Meta's llama/model.py."""

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))  # expect: FUSE104


class SiluModuleMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(dim, hidden)
        self.proj = nn.Linear(hidden, dim)
        self.act = nn.SiLU()

    def forward(self, hidden_states):
        return self.proj(self.fc2(hidden_states) * self.act(self.fc1(hidden_states)))  # expect: FUSE104


class FunctionalSiluMLP(nn.Module):
    def forward(self, x):
        return self.w_out(self.activation(self.w_gate(x)) * self.w_in(x))  # expect: FUSE104

    def __init__(self, dim, hidden):
        super().__init__()
        self.activation = torch.nn.functional.silu  # set after forward in the file: still known
        self.w_gate = nn.Linear(dim, hidden)
        self.w_in = nn.Linear(dim, hidden)
        self.w_out = nn.Linear(hidden, dim)


class Phi3MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_up_proj = nn.Linear(config.hidden_size, 2 * config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.activation_fn = ACT2FN[config.hidden_act]

    def forward(self, hidden_states):
        up_states = self.gate_up_proj(hidden_states)
        gate, up_states = up_states.chunk(2, dim=-1)
        up_states = up_states * self.activation_fn(gate)  # expect: FUSE104
        return self.down_proj(up_states)


class T5DenseGatedActDense(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.act = ACT2FN[config.dense_act_fn]

    def forward(self, hidden_states):
        hidden_gelu = self.act(self.wi_0(hidden_states))
        hidden_linear = self.wi_1(hidden_states)
        hidden_states = hidden_gelu * hidden_linear  # expect: FUSE104
        return self.wo(hidden_states)


def swiglu_local(x, w1, w2, w3):
    act = ACT2FN["silu"]
    return w2(act(w1(x)) * w3(x))  # expect: FUSE104


class GeGLU(nn.Module):
    """GELU-gated: another unit (torch_npu.npu_geglu), not SwiGLU."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.down(self.act(self.gate(x)) * self.up(x))


class NotGated(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, x, scale):
        y = self.act_fn(self.fc(x)) * scale  # scaled, not gated by a second projection
        z = self.act_fn(self.fc(x)) * self.fc(x)  # the same projection twice
        return self.act_fn(self.fc1(x)) + y + z
