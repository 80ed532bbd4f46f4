"""A small GPT block trained on the fake NPU (fake_npu.py): the backward pass runs on the
autograd engine's device thread, as on CUDA and Ascend. Planted for the capture: a loss read
with .item() per step (SYNC001 at the print line)."""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import fake_npu


class Block(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = F.softmax((q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


torch.manual_seed(0)
model = fake_npu.to_device(nn.Sequential(Block(), Block()))
head = fake_npu.to_device(nn.Linear(32, 16))
params = list(model.parameters()) + list(head.parameters())
optimizer = torch.optim.SGD(params, lr=0.05)
for step in range(5):
    x = fake_npu.tensor(torch.randn(4, 8, 32))
    y = fake_npu.tensor(torch.randint(0, 16, (4 * 8,)))
    logits = head(model(x))  # FORWARD
    loss = F.cross_entropy(logits.view(-1, 16), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step} loss {loss.item():.4f}")  # PLANTED

# A backend written in Python runs Python code on autograd's device thread, and at interpreter
# exit such a C++ thread now and then aborts the process under load ("terminate called without
# an active exception": pytorch/pytorch#38228; seen twice this round, both on a loaded machine). The
# capture ended with its step range (1:3) before this line; leave without the teardown.
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
