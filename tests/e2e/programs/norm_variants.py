"""Trains a small stack of RMSNorm styles (norm_modules.py) for a few SGD steps."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from norm_modules import Net  # noqa: E402

torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(4):
    x = torch.randn(4, 8, 16)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("done")
