"""fp16 overflow planted for amp-check at O2: exp of values in [11, 12] (exp(12) > 65504)."""
import torch

torch.manual_seed(0)
model = torch.nn.Linear(8, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    x = torch.rand(4, 8) + 11.0
    h = torch.exp(x)  # PLANTED
    y = model(h / 1e5)
    loss = y.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("done", step)
