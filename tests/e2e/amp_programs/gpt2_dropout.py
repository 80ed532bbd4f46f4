"""GPT-2 written the way transformers' modeling_gpt2 and nanoGPT write it, trained with dropout
on (attention, residual and embedding dropout): dropout's mask buffer starts as empty_like's
uninitialised memory, which bernoulli_ fills. amp-check measured that memory (AMP001/AMP002 at
aten::empty_like, counts changing from run to run of the same seeded program)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, d, heads, p):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.attn_dropout = nn.Dropout(p)
        self.resid_dropout = nn.Dropout(p)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
        att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        y = (self.attn_dropout(att) @ v).transpose(1, 2).contiguous().view(b, t, d)
        return self.resid_dropout(self.c_proj(y))


class Block(nn.Module):
    def __init__(self, d=64, heads=4, p=0.1):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = Attention(d, heads, p)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(p))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab=128, d=64, n_layer=2, block=16):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList([Block(d) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.size(1))
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


torch.manual_seed(0)
model = GPT()
model.train()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(5):
    idx = torch.randint(0, 128, (4, 16))
    logits = model(idx)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), idx.view(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    print("step", step, "loss", round(loss.item(), 4))
