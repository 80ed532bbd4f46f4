# AMP101 negative: the same loop with a GradScaler.
import torch
import torch_npu

scaler = torch.npu.amp.GradScaler()


def train(model, loader, opt):
    for x, y in loader:
        with torch.npu.amp.autocast():
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
