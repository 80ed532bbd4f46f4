"""torch.compile'd and TorchScript'd modules trained under capture (torch >= 2.0 for compile).
argv[1]: "compile" (torch.compile(model, backend=argv[2])), "script" (torch.jit.script), or
"autocast" (the torch 2 spellings torch.autocast / torch.amp.autocast / torch.amp.GradScaler).
Prints the loss of every step: capture must not change a digit."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def main():
    mode = sys.argv[1]
    torch.manual_seed(0)
    model = Block()
    net = model
    if mode == "compile":
        net = torch.compile(model, backend=sys.argv[2] if len(sys.argv) > 2 else "inductor")
    elif mode == "script":
        net = torch.jit.script(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    scaler = torch.amp.GradScaler("cpu", enabled=False) if mode == "autocast" else None
    for i in range(5):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(8, 16, generator=g)
        if mode == "autocast":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                with torch.amp.autocast(device_type="cpu", enabled=False):
                    y = net(x)
            loss = F.mse_loss(y.float(), torch.zeros(8, 16))
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss = F.mse_loss(net(x), torch.zeros(8, 16))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("step %d loss %.9f" % (i, loss.detach().float()))


main()
