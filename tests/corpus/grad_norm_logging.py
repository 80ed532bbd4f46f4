"""Gradient-norm logging as training scripts write it (issue 40): a one-line float(sum(...)) in
the log line, a stacked total norm read with .item() into a metrics dict, a per-parameter
.item() sum, and clip_grad_norm_'s returned tensor checked for inf/nan before the step. Each
reads a device value on the host every step; the model and the loop are otherwise clean
(AdamW with its defaults, data made on the device)."""
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger("train")
logging.basicConfig(level=logging.INFO, format="%(message)s")


class TwoLayer(nn.Module):
    def __init__(self, d_in=32, d_hidden=64, d_out=8):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def total_grad_norm(parameters):
    grads = [p.grad.detach() for p in parameters if p.grad is not None]
    return torch.norm(torch.stack([g.norm(2) for g in grads]), 2)


def l2_of_grads(model):
    return sum(p.grad.norm(2).item() ** 2 for p in model.parameters()) ** 0.5  # expect: SYNC001


torch.manual_seed(0)
device = "cpu"
model = TwoLayer().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
metrics = {}
for step in range(5):
    x = torch.randn(16, 32, device=device)
    y = torch.randn(16, 8, device=device)
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    grad_norm = float(sum(p.grad.norm() for p in model.parameters()))  # expect: SYNC001
    metrics["grad_norm"] = total_grad_norm(model.parameters()).item()  # expect: SYNC001
    metrics["grad_l2"] = l2_of_grads(model)
    clipped = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if not torch.isfinite(clipped):  # expect: SYNC001
        logger.warning("non-finite gradient norm at step %d, skipped", step)
        continue
    optimizer.step()  # expect: FUSE007:torch1
    logger.info("step %d grad norm %.4f", step, grad_norm)
