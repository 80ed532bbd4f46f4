# FUSE103: attention written out as model repositories write it: GPT-2's baddbmm with the
# transposed key in a variable, einsum, the timm way (.softmax() on a name).
import math

import torch
from torch import nn
import torch_npu


class GPT2Attention(nn.Module):
    def _upcast_and_reordered_attn(self, query, key, value, attention_mask=None):
        # transformers modeling_gpt2.py: `torch.baddbmm` (a bit more efficient with alpha for scaling)
        bsz, num_heads, q_seq_len, dk = query.size()
        _, _, k_seq_len, _ = key.size()
        attn_weights = torch.empty(bsz * num_heads, q_seq_len, k_seq_len, dtype=torch.float32, device=query.device)
        with torch.autocast(query.device.type, enabled=False):
            q, k = query.reshape(-1, q_seq_len, dk), key.transpose(-1, -2).reshape(-1, dk, k_seq_len)
            attn_weights = torch.baddbmm(attn_weights, q.float(), k.float(), beta=0, alpha=self.scaling)
            attn_weights = attn_weights.reshape(bsz, num_heads, q_seq_len, k_seq_len)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)  # expect: FUSE103
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        attn_output = torch.matmul(attn_weights, value)
        return attn_output.transpose(1, 2), attn_weights

    def _upcast_and_reordered_attn_v4(self, query, key, value, scale_factor):
        # The older spelling: the transpose inside the baddbmm call.
        bsz, num_heads, q_seq_len, dk = query.size()
        _, _, k_seq_len, _ = key.size()
        attn_weights = torch.empty(bsz * num_heads, q_seq_len, k_seq_len, dtype=torch.float32, device=query.device)
        q = query.reshape(-1, q_seq_len, dk)
        k = key.reshape(-1, k_seq_len, dk)
        attn_weights = torch.baddbmm(attn_weights, q, k.transpose(-1, -2), beta=0, alpha=scale_factor)
        attn_weights = attn_weights.reshape(bsz, num_heads, q_seq_len, k_seq_len)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)  # expect: FUSE103
        return torch.matmul(attn_weights.type(value.dtype), value)


def einsum_attention(q, k, v, scale):
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * scale
    probs = scores.softmax(dim=-1)  # expect: FUSE103
    return torch.einsum("bhqk,bhkd->bhqd", probs, v)


def einsum_bshd(q, k, v):
    # B,S,H,D inputs, as in codebases that skip the transpose.
    logits = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
    weights = torch.softmax(logits, dim=-1)  # expect: FUSE103
    return torch.einsum("bhqk,bkhd->bqhd", weights, v)


def timm_attention(self, x):
    B, N, C = x.shape
    qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)
    q = q * self.scale
    attn = q @ k.transpose(-2, -1)
    attn = attn.softmax(dim=-1)  # expect: FUSE103
    attn = self.attn_drop(attn)
    return (attn @ v).transpose(1, 2).reshape(B, N, C)


def not_attention(x, w, probs, v):
    mixed = torch.einsum("bhqk,bhkd->bhqd", probs, v)  # probs @ v: no scores to softmax
    logits = x @ w  # no transposed operand
    return torch.softmax(mixed, dim=-1), torch.softmax(logits, dim=-1)
