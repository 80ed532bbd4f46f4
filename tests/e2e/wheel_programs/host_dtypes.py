# Data-pipeline habits that are fine on a GPU and slow on an NPU: numpy's float64 leaking into
# the model's math, sorting integer ids, and masking -inf with isneginf.
import argparse

import numpy as np
import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=3)
args = p.parse_args()
torch.manual_seed(0)
rng = np.random.default_rng(0)
w = torch.nn.Parameter(torch.randn(6, 1, dtype=torch.float64))  # a float64 parameter, as numpy made it
opt = torch.optim.SGD([w], lr=0.01)
for step in range(args.steps):
    x = torch.from_numpy(rng.normal(size=(32, 6)))           # float64 from numpy
    ids = torch.randint(0, 1000, (32,))
    order = ids.argsort()  # WHEEL: int_argsort
    scores = (x[order] @ w).squeeze(1)  # WHEEL: float64_matmul
    scores = scores.masked_fill(torch.isneginf(scores), 0.0)  # WHEEL: isneginf
    loss = scores.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("done")
