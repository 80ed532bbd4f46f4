"""The programs the capture benchmarks run, one training step each, CPU, fixed shapes.

  gpt       nanoGPT-style: 4 blocks, n_embd 128, 4 heads, batch 8, block 128, AdamW
            (LayerNorm, fused qkv Linear + split + view/transpose, SDPA where torch has it,
            GELU MLP, weight-tied head, cross-entropy)
  tiny_gpt  examples/tiny_gpt/train.py, planted variant, sequence length 32
  cnn       a small ResNet-style CNN: 2 residual stages of conv/batchnorm/relu, batch 16 of
            3x32x32, SGD with momentum, cross-entropy

make(name) -> (model, step) where step() runs one forward/backward/optimizer step.
"""
import importlib.util
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.n_embd = n_embd
        self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab=512, block=128, n_layer=4, n_head=4, n_embd=128):
        super().__init__()
        self.block = block
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head, block) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.wte.weight = self.lm_head.weight

    def forward(self, idx, targets):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def _gpt():
    torch.manual_seed(0)
    model = GPT()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    x = torch.randint(0, 512, (8, 128))
    y = torch.randint(0, 512, (8, 128))

    def step():
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model, step


def _tiny_gpt():
    path = os.path.join(ROOT, "examples", "tiny_gpt", "train.py")
    spec = importlib.util.spec_from_file_location("tiny_gpt_train", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = ex.TinyGPT(fixed=False)
    opt = ex.make_optimizer(model, False)
    special = torch.tensor(ex.SPECIAL_TOKENS)

    def step():
        inputs, targets = ex.batch(gen, 32)
        loss = ex.loss_planted(model(inputs), targets, special)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss.item()
    return model, step


class ResidualBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.down is None else self.down(x)))


class SmallResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.layer1 = ResidualBlock(16, 16, 1)
        self.layer2 = ResidualBlock(16, 32, 2)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def _cnn():
    torch.manual_seed(0)
    model = SmallResNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(16, 3, 32, 32)
    y = torch.randint(0, 10, (16,))

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, step


MODELS = {"gpt": _gpt, "tiny_gpt": _tiny_gpt, "cnn": _cnn}


def make(name):
    return MODELS[name]()


def blas():
    """The BLAS torch runs matmuls with: its build's BLAS_INFO, and for "generic" (Debian's
    torch links the system libblas.so.3) the library that alternative points at."""
    import re
    m = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    name = m.group(1) if m else "unknown"
    if name == "generic":
        link = "/usr/lib/x86_64-linux-gnu/libblas.so.3"
        if os.path.exists(link):
            name += " (" + os.path.realpath(link) + ")"
    return name


class Sequence(nn.Module):
    """The PyTorch examples' time-sequence model: two LSTMCells stepped in a Python loop."""

    def __init__(self, hidden=51):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)
        self.hidden = hidden

    def forward(self, x):
        b = x.size(0)
        h_t = torch.zeros(b, self.hidden)
        c_t = torch.zeros(b, self.hidden)
        h_t2 = torch.zeros(b, self.hidden)
        c_t2 = torch.zeros(b, self.hidden)
        outputs = []
        for input_t in x.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            outputs.append(self.linear(h_t2))
        return torch.cat(outputs, dim=1)


def _lstm_cell():
    torch.manual_seed(0)
    model = Sequence()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    t = torch.arange(0, 100, dtype=torch.float32).unsqueeze(0) + torch.randint(-4, 4, (16, 1)).float()
    x = torch.sin(t / 8.0)

    def step():
        out = model(x[:, :-1])
        loss = F.mse_loss(out, x[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, step


MODELS["lstm_cell"] = _lstm_cell
