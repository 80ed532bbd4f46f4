"""Forward and backward inside optimizer.step(closure): LBFGS's documented loop (closure passed
positionally) or Lightning's automatic optimization (`optimizer.step(closure=...)` from a
training_step wrapper). argv[1]: "positional" (default) or "keyword"."""
import sys

import torch
import torch.nn as nn

style = sys.argv[1] if len(sys.argv) > 1 else "positional"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
data = [(torch.randn(8, 16), torch.randn(8, 4)) for _ in range(4)]


def training_step(batch):
    x, y = batch
    return nn.functional.mse_loss(model(x), y)


for step, batch in enumerate(data):
    def closure():
        optimizer.zero_grad()
        loss = training_step(batch)
        loss.backward()
        return loss

    if style == "keyword":
        loss = optimizer.step(closure=closure)
    else:
        loss = optimizer.step(closure)
    print(f"step {step} loss {loss.item():.4f}")
