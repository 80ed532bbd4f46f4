"""Shared by the amp-check test programs: a training loop over a model whose parameters and
data are positive (no cancellation), so that an fp16 run of it is accurate by construction;
each program plants at most one precision problem on a line marked `# PLANTED`."""
import torch


class Positive(torch.nn.Module):
    """y = relu(x @ w + b) with w, b > 0: fp16 rounding alone keeps ~1e-3 relative error."""

    def __init__(self, dim=32):
        super().__init__()
        self.w = torch.nn.Parameter(torch.rand(dim, dim) / dim + 0.01)
        self.b = torch.nn.Parameter(torch.rand(dim) + 0.5)

    def forward(self, x):
        return torch.relu(x @ self.w + self.b)


def train(model, head, steps=4, dim=32):
    torch.manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(steps):
        x = torch.rand(16, dim) + 0.5
        loss = head(model(x)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", repr(float(loss.detach())))
