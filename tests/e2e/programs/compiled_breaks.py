"""A torch.compile'd model whose compiled code breaks its graphs, written three ways users write
them, and whose inputs change shape between steps (a recompile). argv[1]: the backend (default
aot_eager: no C++ compiler needed). Prints each step's loss: the capture must not change a digit."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        h = self.proj(x)
        if h.mean() > 0:              # data-dependent branch: graph break
            h = h * 2
        return h


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = Gate()
        self.out = nn.Linear(16, 4)
        self.calls = 0

    def forward(self, x):
        h = self.gate(x)
        scale = h.abs().max().item()  # a host read inside compiled code: graph break
        self.calls += 1
        return self.out(h / (1.0 + scale))


def main():
    backend = sys.argv[1] if len(sys.argv) > 1 else "aot_eager"
    torch.manual_seed(0)
    model = Net()
    net = torch.compile(model, backend=backend)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(6):
        g = torch.Generator().manual_seed(step)
        x = torch.randn(4 + (step % 3), 16, generator=g)   # the batch size changes: recompiles
        loss = F.mse_loss(net(x), torch.zeros(x.shape[0], 4))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step %d loss %.9f" % (step, loss.item()))


if __name__ == "__main__":
    main()
