# The documented GradScaler loop (torch.cuda.amp's scaler disables itself without CUDA, its
# calls are still recorded): no AMP004 or AMP005 finding.
import torch

from amp_common import Positive

torch.manual_seed(0)
model = Positive()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.cuda.amp.GradScaler(enabled=torch.cuda.is_available())
for step in range(4):
    x = torch.rand(16, 32) + 0.5
    loss = model(x).mean()
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print("step", step, "loss", repr(float(loss.detach())))
