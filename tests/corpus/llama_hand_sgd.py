"""A LLaMA-style decoder trained with hand-written SGD (no torch.optim): RMSNorm, rotary
embeddings in the complex form, SwiGLU feed-forward, attention in fp32 softmax, and the
loss logged every other step."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

dim, n_heads, seq, vocab = 32, 4, 16, 64
head_dim = dim // n_heads


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)  # expect: FUSE001

    def forward(self, x):
        return self._norm(x.float()).type_as(x) * self.weight


def precompute_freqs_cis(d, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, d, 2)[: (d // 2)].float() / d))
    t = torch.arange(end)
    return torch.polar(torch.ones(end, d // 2), torch.outer(t, freqs).float())


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)  # expect: FUSE003
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)  # expect: FUSE003
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, freqs_cis, mask):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, n_heads, head_dim)
        xk = self.wk(x).view(bsz, seqlen, n_heads, head_dim)
        xv = self.wv(x).view(bsz, seqlen, n_heads, head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        xq, keys, values = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(head_dim)  # expect: CONTIG002
        scores = scores + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)  # expect: FUSE004
        output = torch.matmul(scores, values)  # expect: CONTIG002
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)  # expect: CONTIG001
        return self.wo(output)


class FeedForward(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))  # expect: FUSE005


class TransformerBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.feed_forward = FeedForward(4 * dim)
        self.attention_norm = RMSNorm(dim)
        self.ffn_norm = RMSNorm(dim)

    def forward(self, x, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), freqs_cis, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, n_layers=2):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([TransformerBlock() for _ in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        self.freqs_cis = precompute_freqs_cis(head_dim, seq)

    def forward(self, tokens):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        mask = torch.full((seqlen, seqlen), float("-inf")).triu(1)
        for layer in self.layers:
            h = layer(h, self.freqs_cis[:seqlen], mask)
        return self.output(self.norm(h)).float()


torch.manual_seed(0)
device = torch.device("cpu")
model = Transformer().to(device)
lr = 0.05
for step in range(6):
    tokens = torch.randint(0, vocab, (4, seq + 1)).to(device)  # expect: SYNC001
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
    model.zero_grad(set_to_none=True)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)  # expect: FUSE007
    if step % 2 == 0:
        print("step", step, "loss", loss.item())  # expect: SYNC001
