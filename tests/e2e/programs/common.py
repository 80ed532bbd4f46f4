"""Shared by the planted test programs: a tiny model, data and a training loop.

Each program plants one problem on a line marked `# PLANTED` (the tests look the line up),
trains for `--steps` steps (default 5) and prints the loss every step with repr(float), so
runs with and without capture can be compared bit for bit.
"""
import argparse

import torch


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--mark-steps", action="store_true", help="end each step with npu_doctor.step()")
    p.add_argument("--adam", action="store_true", help="torch.optim.Adam(foreach=False) instead of SGD")
    return p.parse_args()


def make_model(dim=32):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(dim, dim), torch.nn.Tanh(), torch.nn.Linear(dim, 4))


def train(step_fn, steps, optimizer_cls=torch.optim.SGD):
    """step_fn(model, step) -> loss tensor. Prints every loss at the end (off the device)."""
    model = make_model()
    opt = optimizer_cls(model.parameters(), lr=0.1)
    losses = []
    for step in range(steps):
        loss = step_fn(model, step)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    for step, loss in enumerate(losses):
        print("step", step, "loss", repr(float(loss)))
