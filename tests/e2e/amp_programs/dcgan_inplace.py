# DCGAN discriminator (the PyTorch examples' style): LeakyReLU(inplace=True) in fp16 autocast with a
# GradScaler and BCEWithLogitsLoss (autocast-safe). The in-place activations are exact enough in fp16:
# amp-check must show the same error for them as for the out-of-place ones (no finding).
import torch
import torch.nn as nn

class Discriminator(nn.Module):
    def __init__(self, ndf=8):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(3, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False))

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)

torch.manual_seed(0)
netD = Discriminator()
opt = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
scaler = torch.cuda.amp.GradScaler(enabled=True)
criterion = nn.BCEWithLogitsLoss()
for i in range(3):
    real = torch.randn(16, 3, 16, 16)
    label = torch.full((16,), 1.0)
    netD.zero_grad()
    with torch.cuda.amp.autocast():
        out = netD(real)
        errD = criterion(out, label)
    scaler.scale(errD).backward()
    scaler.step(opt)
    scaler.update()
    print(i, errD.item())
