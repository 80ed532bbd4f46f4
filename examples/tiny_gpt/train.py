"""A tiny GPT-style language model trained on random tokens: the npu-doctor demo.

Runs on CPU (torch >= 1.13) in a few seconds. Written the way many ports from CUDA look,
with the problems npu-doctor finds planted on purpose:

  - loss.item() and a printed tensor every step          (host-device syncs)
  - torch.isin for the loss mask                         (no NPU kernel in some torch_npu lines)
  - q/k/v permuted and fed to matmul without layout care (strided inputs, hidden copies)
  - hand-written RMSNorm, rotary (rotate_half), softmax, SwiGLU and tanh-GELU
                                                         (fused NPU kernels exist for these)
  - AdamW(foreach=False): a Python loop of small ops per parameter (fused AdamW exists)
  - a sequence length that changes every step and x[mask] (dynamic shapes: recompiles)

    python examples/tiny_gpt/train.py --steps 6            # the problems
    python examples/tiny_gpt/train.py --steps 6 --fixed    # same model, problems fixed
    npu-doctor run -- python examples/tiny_gpt/train.py    # the diagnosis
"""

import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

try:  # on an Ascend machine the fixed variant uses the fused NPU kernels
    import torch_npu  # noqa: F401
    HAS_NPU = torch.npu.is_available()
except ImportError:
    HAS_NPU = False

VOCAB = 256
DIM = 128
HEADS = 4
LAYERS = 2
BATCH = 8
SPECIAL_TOKENS = (0, 1, 2)   # padding / bos / eos: not trained on


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6, fixed=False):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps
        self.fixed = fixed

    def forward(self, x):
        if self.fixed and HAS_NPU:
            return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]
        variance = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(variance + self.eps) * self.weight


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(x, cos, sin):
    return x * cos + rotate_half(x) * sin


def rotary_tables(seq_len, head_dim):
    inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
    t = torch.arange(seq_len).float()
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


class Attention(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM, bias=False)
        self.proj = nn.Linear(DIM, DIM, bias=False)
        self.fixed = fixed

    def forward(self, x, cos, sin, causal):
        B, S, _ = x.shape
        D = DIM // HEADS
        if self.fixed:
            # One layout change for q, k and v together, made explicit; k^T is then a free
            # last-two-dims transpose for matmul.
            qkv = self.qkv(x).view(B, S, 3, HEADS, D).permute(2, 0, 3, 1, 4).contiguous()
            q, k, v = qkv[0], qkv[1], qkv[2]
            q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
            scores = q @ k.transpose(-2, -1) / math.sqrt(D)
            scores = scores.masked_fill(causal, float("-inf"))
            att = torch.softmax(scores, dim=-1)
            out = (att @ v).transpose(1, 2).reshape(B, S, DIM)
            return self.proj(out)
        q, k, v = self.qkv(x).split(DIM, dim=-1)
        q = q.view(B, S, HEADS, D).permute(0, 2, 1, 3)
        k = k.view(B, S, HEADS, D).permute(0, 2, 1, 3)
        v = v.view(B, S, HEADS, D).permute(0, 2, 1, 3)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(D)
        scores = scores.masked_fill(causal, float("-inf"))
        # softmax written out
        scores = scores - scores.max(dim=-1, keepdim=True).values
        weights = scores.exp()
        att = weights / weights.sum(dim=-1, keepdim=True)
        out = torch.matmul(att, v).permute(0, 2, 1, 3).reshape(B, S, DIM)
        return self.proj(out)


class SwiGLU(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.w1 = nn.Linear(DIM, 2 * DIM, bias=False)
        self.w3 = nn.Linear(DIM, 2 * DIM, bias=False)
        self.w2 = nn.Linear(2 * DIM, DIM, bias=False)
        self.fixed = fixed

    def forward(self, x):
        if self.fixed and HAS_NPU:
            return self.w2(torch_npu.npu_swiglu(torch.cat((self.w1(x), self.w3(x)), dim=-1)))
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))


class Block(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.norm1 = RMSNorm(DIM, fixed=fixed)
        self.attn = Attention(fixed)
        self.norm2 = RMSNorm(DIM, fixed=fixed)
        self.mlp = SwiGLU(fixed)

    def forward(self, x, cos, sin, causal):
        x = x + self.attn(self.norm1(x), cos, sin, causal)
        return x + self.mlp(self.norm2(x))


class TinyGPT(nn.Module):
    def __init__(self, fixed=False):
        super().__init__()
        self.fixed = fixed
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList([Block(fixed) for _ in range(LAYERS)])
        self.norm = RMSNorm(DIM, fixed=fixed)
        self.head_in = nn.Linear(DIM, DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        S = tokens.shape[1]
        cos, sin = rotary_tables(S, DIM // HEADS)
        causal = torch.ones(S, S, dtype=torch.bool).triu(1)
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, cos, sin, causal)
        h = self.head_in(self.norm(x))
        h = F.gelu(h, approximate="tanh") if self.fixed else gelu_tanh(h)
        return self.head(h)


def batch(gen, seq_len):
    tokens = torch.randint(0, VOCAB, (BATCH, seq_len + 1), generator=gen)
    return tokens[:, :-1], tokens[:, 1:]


def loss_planted(logits, targets, special):
    keep = ~torch.isin(targets, special)
    return F.cross_entropy(logits[keep], targets[keep])      # x[mask]: data-dependent shape


def loss_fixed(logits, targets, special):
    keep = (targets.unsqueeze(-1) != special).all(-1).float()   # fixed shape, no isin
    ce = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1), reduction="none")
    return (ce * keep.reshape(-1)).sum() / keep.sum()


def make_optimizer(model, fixed):
    if not fixed:
        return torch.optim.AdamW(model.parameters(), lr=3e-3, foreach=False)
    try:
        return torch.optim.AdamW(model.parameters(), lr=3e-3, fused=True)
    except (TypeError, RuntimeError, ValueError):
        return torch.optim.AdamW(model.parameters(), lr=3e-3, foreach=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--fixed", action="store_true", help="the same model with the problems fixed")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    model = TinyGPT(fixed=args.fixed)
    opt = make_optimizer(model, args.fixed)
    special = torch.tensor(SPECIAL_TOKENS)
    running = torch.zeros(())

    for step in range(args.steps):
        # planted: a new sequence length every step; fixed: one padded length
        seq_len = 32 if args.fixed else int(torch.randint(24, 41, (1,), generator=gen))
        inputs, targets = batch(gen, seq_len)
        logits = model(inputs)
        if args.fixed:
            loss = loss_fixed(logits, targets, special)
        else:
            loss = loss_planted(logits, targets, special)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if args.fixed:
            running += loss.detach()          # stays on the device
        else:
            print(f"step {step} seq {seq_len} loss {loss.item():.6f}")
            print("logits[0, 0, :3] =", logits[0, 0, :3])
    if args.fixed:
        print(f"mean loss over {args.steps} steps {(running / args.steps).item():.6f}")


if __name__ == "__main__":
    main()
