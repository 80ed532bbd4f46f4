"""Class names are the program's text, whatever it holds: an optimizer subclass and a module
subclass made with type() under names with a quote, a backslash, a newline and markup. The
capture must stay valid JSON and keep the names."""
import torch
import torch.nn as nn

OddOptimizer = type('Ad"am\\\n<x>', (torch.optim.Adam,), {})
OddBlock = type('Blo"ck\\', (nn.Linear,), {})
torch.manual_seed(4)
model = nn.Sequential(OddBlock(5, 5), nn.ReLU(), nn.Linear(5, 1))
opt = OddOptimizer(model.parameters(), lr=0.01)
for step in range(4):
    loss = model(torch.randn(3, 5)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("ok")
