"""F.scaled_dot_product_attention written the ways real models call it (torch >= 2.0).
`# SDPA_FIND <name>` marks a call torch_npu cannot send to flash attention (FUSE008 must point
at it); `# SDPA_CLEAN <name>` marks one that reaches it (no FUSE008, and no FUSE004 since the
attention is not hand-written)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.functional import scaled_dot_product_attention as sdpa

from common_affinity import DIM, train

B, S, H = 2, 8, 2
D = DIM // H


class CausalSelfAttention(nn.Module):
    """nanoGPT: fused qkv projection, BNSD by view + transpose, is_causal."""

    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(DIM, 3 * DIM)
        self.c_proj = nn.Linear(DIM, DIM)

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(DIM, dim=2)
        k = k.view(b, t, H, c // H).transpose(1, 2)
        q = q.view(b, t, H, c // H).transpose(1, 2)
        v = v.view(b, t, H, c // H).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)  # SDPA_CLEAN nanogpt
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class BertSelfAttention(nn.Module):
    """Hugging Face BERT style: separate projections, an additive float extended mask."""

    def __init__(self):
        super().__init__()
        self.query = nn.Linear(DIM, DIM)
        self.key = nn.Linear(DIM, DIM)
        self.value = nn.Linear(DIM, DIM)

    def transpose_for_scores(self, x):
        return x.view(x.size()[:-1] + (H, D)).permute(0, 2, 1, 3)

    def forward(self, hidden, attention_mask):
        extended = (1.0 - attention_mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
        q = self.transpose_for_scores(self.query(hidden))
        k = self.transpose_for_scores(self.key(hidden))
        v = self.transpose_for_scores(self.value(hidden))
        ctx = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=extended, dropout_p=0.1 if self.training else 0.0)  # SDPA_FIND bert_float_mask
        return ctx.permute(0, 2, 1, 3).reshape(hidden.shape)


class LlamaAttention(nn.Module):
    """LLaMA style: no bias, a bool causal mask passed positionally, from-imported sdpa."""

    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(DIM, DIM, bias=False)
        self.wk = nn.Linear(DIM, DIM, bias=False)
        self.wv = nn.Linear(DIM, DIM, bias=False)
        self.register_buffer("causal", torch.ones(S, S, dtype=torch.bool).tril())

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, H, D).transpose(1, 2)
        xk = self.wk(x).view(bsz, seqlen, H, D).transpose(1, 2)
        xv = self.wv(x).view(bsz, seqlen, H, D).transpose(1, 2)
        out = sdpa(xq, xk, xv, self.causal[:seqlen, :seqlen])  # SDPA_CLEAN llama_bool_mask
        return out.transpose(1, 2).contiguous().view(bsz, seqlen, -1)


class FlatHeads(nn.Module):
    """fairseq-style (batch*heads, seq, head_dim) layout, scaled by hand, causal float mask."""

    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(DIM, 3 * DIM)
        mask = torch.full((S, S), float("-inf")).triu(1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        q, k, v = self.in_proj(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(B, S, H, D).transpose(1, 2).reshape(B * H, S, D) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask, scale=1.0 / math.sqrt(D))  # SDPA_FIND flat_heads
        return y.view(B, H, S, D).transpose(1, 2).reshape(B, S, DIM)


class T5Attention(nn.Module):
    """T5 style (transformers' modeling_t5 with sdpa): a learned relative position bias per head,
    added to the padding mask, passed as the float mask; T5 does not scale the scores."""

    def __init__(self, buckets=8):
        super().__init__()
        self.q = nn.Linear(DIM, DIM, bias=False)
        self.k = nn.Linear(DIM, DIM, bias=False)
        self.v = nn.Linear(DIM, DIM, bias=False)
        self.o = nn.Linear(DIM, DIM, bias=False)
        self.relative_attention_bias = nn.Embedding(buckets, H)

    def forward(self, x, keep):
        b, s, _ = x.shape
        q, k, v = (proj(x).view(b, s, H, D).transpose(1, 2) for proj in (self.q, self.k, self.v))
        rel = (torch.arange(s)[None, :] - torch.arange(s)[:, None]).clamp(0, 7)
        position_bias = self.relative_attention_bias(rel).permute(2, 0, 1).unsqueeze(0)   # [1, H, S, S]
        position_bias = position_bias + (1.0 - keep[:, None, None, :]) * torch.finfo(x.dtype).min
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=position_bias, scale=1.0)  # SDPA_FIND t5_position_bias
        return self.o(out.transpose(1, 2).reshape(b, s, DIM))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gpt = CausalSelfAttention()
        self.bert = BertSelfAttention()
        self.llama = LlamaAttention()
        self.flat = FlatHeads()
        self.t5 = T5Attention()
        # PyTorch's own layer: it turns the bool padding mask into a float one and calls SDPA
        # itself; nothing at the user's line is the user's to change.
        self.encoder = nn.TransformerEncoderLayer(DIM, nhead=H, dim_feedforward=2 * DIM, batch_first=True)

    def forward(self, x):
        keep = torch.ones(B, S)
        keep[:, -2:] = 0
        y = self.t5(self.flat(self.llama(self.bert(self.gpt(x), keep))), keep)
        return self.encoder(y, src_key_padding_mask=keep == 0)  # SDPA_CLEAN torch_transformer_layer


if __name__ == "__main__":
    train(Model(), lambda: torch.randn(B, S, DIM))
