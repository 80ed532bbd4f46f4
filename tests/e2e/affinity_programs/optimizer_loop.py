"""Per-parameter optimizer loops: argv[1] picks the optimizer."""
import sys

import torch
import torch.nn as nn

from common_affinity import DIM, train


class Lion(torch.optim.Optimizer):
    """The program's own optimizer, written the way lion-pytorch writes it: one parameter at a
    time."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in filter(lambda p: p.grad is not None, group["params"]):
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg, (beta1, beta2) = state["exp_avg"], group["betas"]
                p.data.mul_(1 - group["lr"] * group["weight_decay"])
                update = exp_avg.clone().mul_(beta1).add(p.grad, alpha=1 - beta1).sign_()
                p.add_(update, alpha=-group["lr"])
                exp_avg.mul_(beta2).add_(p.grad, alpha=1 - beta2)


def make(kind, params):
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=1e-3, foreach=False)  # VARIANT adamw
    if kind == "adam":
        return torch.optim.Adam(params, lr=1e-3, foreach=False)  # VARIANT adam
    if kind == "sgd_momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9, weight_decay=1e-4, foreach=False)  # VARIANT sgd_momentum
    if kind == "lion":
        return Lion(params, lr=1e-4)  # VARIANT lion
    if kind == "fused_off":   # nanoGPT's configure_optimizers off CUDA: fused=use_fused with use_fused False
        use_fused = False
        return torch.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.95), fused=use_fused)  # VARIANT fused_off
    if kind == "default":
        return torch.optim.AdamW(params, lr=1e-3)  # defaults: foreach on NPU from torch 2.1
    return torch.optim.AdamW(params, lr=1e-3, foreach=True)  # NEARMISS foreach


if __name__ == "__main__":
    model = nn.Sequential(*[nn.Linear(DIM, DIM) for _ in range(3)])   # 6 parameters
    opt = make(sys.argv[1], model.parameters())
    train(model, lambda: torch.randn(4, DIM), optimizer=opt)  # STEP
