# nn.BCELoss under autocast: torch_npu's autocast bans binary_cross_entropy (it raises on the NPU).
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler(enabled=True)
criterion = nn.BCELoss()
for step in range(3):
    x = torch.randn(32, 16)
    y = (x.sum(1, keepdim=True) > 0).float()
    with torch.cuda.amp.autocast():
        loss = criterion(model(x), y)  # PLANTED: BCELoss under autocast
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print(step, loss.item())
