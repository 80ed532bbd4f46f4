"""Warnings torch raises inside calls the capture wraps must point at the program's own
lines: `float(t)` / `t.item()` on a tensor that requires grad (torch >= 2), `torch.tensor(t,
device=...)` copy-constructing from a tensor, a scripted function's deprecation warnings.
Each warning is recorded (not printed) and its file:line printed with the line's text, so a
capture that moves one changes the output."""
import linecache
import os
import warnings

import torch
import torch.nn as nn

torch.manual_seed(9)
model = nn.Linear(3, 2)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
sites = []
for step in range(5):
    out = model(torch.randn(4, 3)).sum()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scalar = float(out)                                   # requires grad -> UserWarning (torch 2)
        first = out.item()
        copied = torch.tensor(out.detach(), device="cpu")     # copy-construct warning
        ratio = copied / (scalar + first + 1)
    for w in caught:
        sites.append("%s:%d %s" % (os.path.basename(w.filename), w.lineno, linecache.getline(w.filename, w.lineno).strip()[:40]))
    opt.zero_grad()
    out.backward()
    opt.step()
for s in sorted(set(sites)):
    print(s)
print("warnings", len(sites))
