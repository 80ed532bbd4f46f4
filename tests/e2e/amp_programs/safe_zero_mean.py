# fp16-safe and ordinary: zero-mean data and default-initialised layers, so many outputs sit
# near zero (large relative error from rounding alone, which must not count as drift).
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(4):
    x, y = torch.randn(16, 32), torch.randn(16, 8)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", step, "loss", repr(float(loss.detach())))
