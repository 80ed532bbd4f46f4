# CONTIG101 in attention code as model repositories write it. k^T for q @ k^T is a swap of
# the last two dims of a 4-D (B, H, S, D) tensor: the NPU matmul takes it as a flag, whatever
# the spelling (-2/-1, 2/3 and 3/2 of a 4-D tensor, 1/2 of a 3-D one). B,S,H,D -> B,H,S,D
# (transpose(1, 2) of a 4-D tensor) is a real strided view: the matmul copies it.
import math

import torch
import torch.nn.functional as F
from torch import nn
import torch_npu


# transformers modeling_llama.py: the rank of `key` is not stated here; (2, 3) is taken as the
# last two dims of a 4-D attention tensor.
def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)

    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask

    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)  # expect: FUSE103
    attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


# transformers modeling_t5.py writes the swap the other way round.
def t5_scores(query_states, key_states, position_bias):
    scores = torch.matmul(query_states, key_states.transpose(3, 2))
    scores += position_bias
    return nn.functional.softmax(scores.float(), dim=-1).type_as(scores)  # expect: FUSE103


class LlamaAttention(nn.Module):
    """An older transformers LlamaAttention: the shapes are stated, so the ranks are known."""

    def forward(self, hidden_states, attention_mask=None):
        bsz, q_len, _ = hidden_states.size()
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)

        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)

        # key_states is (B, S, H, D): swapping dims 2 and 3 of it is free; query_states is a
        # B,S,H,D -> B,H,S,D view, copied by the matmul.
        head_scores = torch.matmul(query_states, key_states.transpose(2, 3))  # expect: CONTIG101
        key_states = key_states.transpose(1, 2)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)  # expect: CONTIG101, CONTIG101
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32)  # expect: FUSE103
        attn_output = torch.matmul(attn_weights, value_states)  # expect: CONTIG101
        attn_output = attn_output.transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.o_proj(attn_output), head_scores


# Meta's llama/model.py: the cache is B,S,H,D and moved to B,H,S,D with transpose(1, 2).
def llama_attention(self, xq, start_pos, seqlen, bsz):
    keys = self.cache_k[:bsz, : start_pos + seqlen]
    values = self.cache_v[:bsz, : start_pos + seqlen]
    xq = xq.transpose(1, 2)
    keys = keys.transpose(1, 2)
    values = values.transpose(1, 2)
    scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)  # expect: CONTIG101, CONTIG101
    scores = F.softmax(scores.float(), dim=-1).type_as(xq)  # expect: FUSE103
    output = torch.matmul(scores, values)  # expect: CONTIG101
    return output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)


# nanoGPT model.py
def causal_self_attention(self, x):
    B, T, C = x.size()
    q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
    k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
    q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
    v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # expect: CONTIG101, CONTIG101
    att = F.softmax(att, dim=-1)  # expect: FUSE103
    y = att @ v  # expect: CONTIG101
    # A 3-D x: transpose(1, 2) swaps its last two dims.
    mixed = x.transpose(1, 2) @ self.proj_in
    return y.transpose(1, 2).contiguous().view(B, T, C), mixed


# fairseq / transformers FSMT: 3-D (B*H, S, D) tensors into bmm.
def fsmt_attention(self, query, key_states, value_states, bsz, tgt_len):
    query_states = self.q_proj(query) * self.scaling
    query_states = query_states.view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
    attn_weights = torch.bmm(query_states, key_states.transpose(1, 2))  # expect: CONTIG101
    shaped = query.view(bsz * self.num_heads, tgt_len, self.head_dim)
    other = torch.bmm(shaped, key_states.transpose(1, 2))
    probs = nn.functional.softmax(attn_weights, dim=-1)  # expect: FUSE103
    return torch.bmm(probs, value_states), other


# Elementwise work keeps a view's layout: q and k are still B,S,H,D in memory.
def rotary_after_permute(self, x, cos, sin, B, S, H, D):
    q, k = self.qk(x).chunk(2, dim=-1)
    q = q.view(B, S, H, D).permute(0, 2, 1, 3)
    k = k.view(B, S, H, D).permute(0, 2, 1, 3)
    q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
    q = q * self.scale
    scores = q @ k.transpose(-2, -1)  # expect: CONTIG101, CONTIG101
    k = k.contiguous()
    return scores, q @ k.transpose(-2, -1)  # expect: CONTIG101


# Other spellings of the last-two swap, and what is not one.
def spellings(x, w, q, k, b, s, d):
    q3 = q.view(b, s, d)
    s1 = torch.matmul(q, k.swapaxes(-1, -2))
    s2 = torch.matmul(q, k.transpose(dim0=2, dim1=3))
    s3 = q @ k.mT
    s4 = q3.unsqueeze(1).transpose(2, 3) @ k
    s5 = q3.unsqueeze(1).transpose(1, 2) @ k  # expect: CONTIG101
    s6 = q @ k.view(2, 3, 4, 5).T  # expect: CONTIG101
    s7 = F.linear(x, w.t())  # the weight is used transposed anyway: free
    s8 = F.linear(x.mT, w)  # expect: CONTIG101
    return s1, s2, s3, s4, s5, s6, s7, s8
