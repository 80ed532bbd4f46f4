"""TorchScript made and run inside the recorded steps, the ways programs do it. argv[1]:
  trace     torch.jit.trace of a module and of a function with Python constants (`x * 2 + 1`:
            the traced graph holds wrapped-number constants, which reach the capture as numbers)
  grad      a @torch.jit.script function calling torch.autograd.grad (a gradient penalty),
            compiled at import, before any capture patch could matter
  factories torch.jit.script of functions calling torch.zeros / torch.full / torch.tensor /
            torch.bitwise_and, scripted inside a step (the capture wraps some of these then)
Prints the loss of each step: the capture must not change a digit."""
import sys

import torch
import torch.nn as nn

WHAT = sys.argv[1]
torch.manual_seed(0)


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        return torch.relu(self.fc(x)) * 0.5 + x.sum(-1, keepdim=True) % 3


if WHAT == "grad":
    @torch.jit.script
    def gradient_penalty(out: torch.Tensor, inp: torch.Tensor) -> torch.Tensor:
        g = torch.autograd.grad([out.sum()], [inp], create_graph=True)[0]
        assert g is not None
        return ((g.norm(2, dim=1) - 1) ** 2).mean()


def scripted_factories():
    def shift(t: torch.Tensor) -> torch.Tensor:
        return t + torch.zeros(1) + torch.full((1,), 0.25)

    def mask_bits(ids: torch.Tensor) -> torch.Tensor:
        return torch.bitwise_and(ids, torch.tensor(6))

    return torch.jit.script(shift), torch.jit.script(mask_bits)


model = Scale()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(5):
    x = torch.randn(4, 6)
    loss = model(x).pow(2).mean()
    if step == 2 and WHAT == "trace":
        traced = torch.jit.trace(model, (x,))
        f = torch.jit.trace(lambda t: t * 2 + 1 - (t > 0).float() * 3, (x,))
        loss = loss + traced(x).mean() + f(x).mean()
    if WHAT == "grad":
        xr = x.clone().requires_grad_()
        loss = loss + gradient_penalty(model(xr), xr)
    if step == 2 and WHAT == "factories":
        shift, mask_bits = scripted_factories()
        loss = loss + shift(x).mean() + mask_bits(torch.arange(8)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step %d loss %.9f" % (step, loss.item()))
