# Planted: a training loop without torch.optim (hand-written SGD), so no optimizer.step()
# ever ends a step: `run` must say that nothing was recorded, not report an all-clear.
import torch

from common import make_model, parse_args

steps = parse_args().steps
model = make_model()
lr = 0.1
for step in range(steps):
    x = torch.randn(16, 32)
    loss = model(x).pow(2).mean()
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)  # PLANTED
    print("step", step, "loss", repr(float(loss)))
