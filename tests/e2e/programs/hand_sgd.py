# Planted: a training loop without torch.optim (hand-written SGD): no optimizer.step() ends a
# step, so each backward() does (with --mark-steps the loop marks steps with npu_doctor.step()).
# The per-parameter update is the finding (FUSE007: torch._foreach_add_ does it at once).
import torch

from common import make_model, parse_args

args = parse_args()
steps = args.steps
model = make_model()
lr = 0.1
for step in range(steps):
    x = torch.randn(16, 32)
    loss = model(x).pow(2).mean()
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)  # PLANTED
    if args.mark_steps:
        import npu_doctor
        npu_doctor.step()
    print("step", step, "loss", repr(float(loss)))
