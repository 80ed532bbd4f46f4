# AMP102: binary cross-entropy inside autocast raises on the NPU (and CUDA); CPU autocast runs it.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_npu


class Trainer:
    def __init__(self, model, device_type):
        self.model = model
        self.device_type = device_type
        self.loss_fn = torch.nn.BCELoss(reduction="sum")

    def step(self, x, y, scaler):
        with torch.autocast(device_type=self.device_type, dtype=torch.float16):
            prob = torch.sigmoid(self.model(x))
            loss = self.loss_fn(prob, y)  # expect: AMP102
        scaler.scale(loss).backward()
        return loss


def train(model, loader, opt, scaler):
    criterion = nn.BCELoss()
    for x, y in loader:
        with torch.npu.amp.autocast():
            prob = torch.sigmoid(model(x))
            loss = criterion(prob, y)  # expect: AMP102
            aux = F.binary_cross_entropy(prob, y)  # expect: AMP102
            other = nn.BCELoss()(prob, y)  # expect: AMP102
        with torch.autocast("npu", dtype=torch.float16):
            logits = model(x)
        fine = criterion(torch.sigmoid(logits.float()), y)  # outside the block: fine
        safe = F.binary_cross_entropy_with_logits(logits, y)  # the safe form
        with torch.autocast("cpu", dtype=torch.bfloat16):
            cpu = criterion(prob, y)  # CPU autocast runs it
        with torch.autocast("npu", enabled=False):
            off = criterion(prob.float(), y)  # autocast off
        scaler.scale(loss + aux + other + fine + safe + cpu + off).backward()
        scaler.step(opt)
        scaler.update()
