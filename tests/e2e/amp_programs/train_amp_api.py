"""A small training loop with GradScaler and autocast calls, for amp-check's records."""
import warnings

import torch

warnings.simplefilter("ignore")   # GradScaler without CUDA warns that it disables itself
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.cuda.amp.GradScaler()
for step in range(4):
    x = torch.randn(8, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False):  # AUTOCAST
        out = model(x)
    loss = out.pow(2).mean()
    opt.zero_grad()
    scaler.scale(loss).backward()  # SCALE
    scaler.step(opt)  # STEP
    scaler.update()
    print("step %d loss %.6f" % (step, loss.item()))
