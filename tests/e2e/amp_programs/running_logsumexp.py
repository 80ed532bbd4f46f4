# A sequence scorer whose loss keeps a running log-sum-exp, in one of two styles (--style):
# a module's forward calling the Tensor method, or the training step calling the torch
# function. logcumsumexp has only a CompositeExplicitAutograd kernel, which calls
# aten::_logcumsumexp: the kernel an NPU must have (no 2.1.0 torch_npu wheel has it), so
# `run` and `amp-check` must both record that kernel op, at the line of the call.
import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--style", choices=("method", "function"), default="method")
p.add_argument("--steps", type=int, default=4)
args = p.parse_args()


class RunningMax(torch.nn.Module):
    """A smooth running maximum over the time axis."""

    def forward(self, scores):
        return scores.logcumsumexp(dim=1)  # STYLE: method


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
running_max = RunningMax()
opt = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(args.steps):
    x = torch.randn(6, 10, 8)
    scores = model(x).sum(-1)   # (batch, time)
    if args.style == "method":
        smooth = running_max(scores)
    else:
        smooth = torch.logcumsumexp(scores, dim=1)  # STYLE: function
    loss = (smooth[:, -1] - scores.mean(1)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", step, "loss", repr(float(loss.detach())))
