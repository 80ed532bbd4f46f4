"""A recurrent cell written inline: one module, one Python loop, the same aten op (mm) at two
lines. amp-check counts calls per line (and module): each line's calls 1-4 are measured, its
5th and 6th are not. (The mode's caller frame used to be torch's own wrapper frame, on 1.13 and 2.x,
so both lines counted as one site: calls 1-4 and 8 of twelve.)"""
import torch
import torch.nn as nn

TIME_STEPS = 6


class InlineRNN(nn.Module):
    def __init__(self, n=8):
        super().__init__()
        self.w_in = nn.Parameter(torch.randn(n, n) / n ** 0.5)
        self.w_h = nn.Parameter(torch.randn(n, n) / n ** 0.5)

    def forward(self, xs):
        h = torch.zeros(xs.size(1), xs.size(2))
        for x in xs:
            u = torch.mm(x, self.w_in)  # INPUT
            h = torch.tanh(u + torch.mm(h, self.w_h))  # HIDDEN
        return h


torch.manual_seed(0)
model = InlineRNN()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
xs = torch.randn(TIME_STEPS, 4, 8)
for step in range(3):
    loss = model(xs).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("done", step)
