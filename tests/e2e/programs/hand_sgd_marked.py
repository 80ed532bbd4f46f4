# Hand-written SGD with the steps marked (npu_doctor.step(), as `run` asks when no
# optimizer.step() ends a step). Planted: the per-parameter update loop (FUSE007, one op per
# parameter: torch._foreach_add_ would do it at once).
import torch

import npu_doctor
from common import make_model, parse_args

steps = parse_args().steps
model = torch.nn.Sequential(make_model(), torch.nn.Tanh(), torch.nn.Linear(4, 4))   # 6 parameters
lr = 0.1
for step in range(steps):
    x = torch.randn(16, 32)
    loss = model(x).pow(2).mean()
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)  # PLANTED
    npu_doctor.step()
    print("step", step, "loss", repr(float(loss)))
