"""A plain fp32 training loop that clips its gradients between backward() and step(), in the
three ways programs write it: torch.nn.utils.clip_grad_norm_, clip_grad_value_, and by hand
(`p.grad.mul_(scale)` / `p.grad.detach().mul_`). Under fp16 amp-check the parameters and their
.grad stay fp32, as under real autocast: the ops on the gradients after backward run in fp32
(issue 41 item 5: the emulation ran clipping's mul_ in fp16 and counted underflows there)."""

import sys

import torch
from torch import nn

torch.manual_seed(0)
style = sys.argv[1] if len(sys.argv) > 1 else "norm"
model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 10))
loss_fn = nn.CrossEntropyLoss()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(32, 64)
y = torch.randint(0, 10, (32,))
for step in range(3):
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    if style == "norm":
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    elif style == "value":
        torch.nn.utils.clip_grad_value_(model.parameters(), 1e-3)
    else:
        total = torch.sqrt(sum((p.grad.detach() ** 2).sum() for p in model.parameters()))
        scale = (0.5 / (total + 1e-6)).clamp(max=1.0)
        for p in model.parameters():
            p.grad.detach().mul_(scale)
    opt.step()
print("loss %.6f" % loss.item())
