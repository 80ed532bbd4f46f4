"""An image classifier trained the way timm's train.py trains one, with the model taken from a
library instead of written by hand: a small ConvNeXt from transformers (timm is not installable
next to torch 2.13+cpu here: the index's torchvision wheel is a CUDA build), `--channels-last`
(model and every input batch in `torch.channels_last`), stochastic depth, label smoothing, AdamW
without weight decay on norms and biases, a cosine schedule stepped per epoch, timm's
AverageMeter logging `loss.item()` every step, and a validate() pass after each epoch that
reads loss, top-1 and top-5 with `.item()` per batch."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from transformers import ConvNextConfig, ConvNextForImageClassification


class AverageMeter:
    """Computes and stores the average and current value (timm.utils.AverageMeter)."""

    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions (timm.utils.accuracy)."""
    maxk = min(max(topk), output.size()[1])
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.reshape(1, -1).expand_as(pred))
    return [correct[:min(k, maxk)].reshape(-1).float().sum(0) * 100. / batch_size for k in topk]


def param_groups_weight_decay(model, weight_decay=0.05):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if param.ndim <= 1 or name.endswith(".bias"):
            no_decay.append(param)
        else:
            decay.append(param)
    return [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": weight_decay}]


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, device, log_interval=1):
    losses_m = AverageMeter()
    model.train()
    end = time.time()
    for batch_idx, (input, target) in enumerate(loader):
        input, target = input.to(device), target.to(device)  # expect: SYNC001[non_blocking]
        input = input.contiguous(memory_format=torch.channels_last)  # expect: CONTIG001[channels_last]
        output = model(input).logits  # expect: CONTIG002[channels_last]
        loss = loss_fn(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses_m.update(loss.item(), input.size(0))  # expect: SYNC001
        if batch_idx % log_interval == 0:
            print(f"Train: {epoch} [{batch_idx:>3d}/{len(loader)}]  Loss: {losses_m.val:#.3g} ({losses_m.avg:#.3g})  "
                  f"LR: {optimizer.param_groups[0]['lr']:.3e}  Time: {time.time() - end:.3f}s")
        end = time.time()


def validate(model, loader, loss_fn, device):
    losses_m, top1_m, top5_m = AverageMeter(), AverageMeter(), AverageMeter()
    model.eval()
    with torch.no_grad():
        for batch_idx, (input, target) in enumerate(loader):
            input, target = input.to(device), target.to(device)  # expect: SYNC001[non_blocking]
            input = input.contiguous(memory_format=torch.channels_last)  # expect: CONTIG001[channels_last]
            output = model(input).logits  # expect: CONTIG002[channels_last]
            loss = loss_fn(output, target)
            acc1, acc5 = accuracy(output, target, topk=(1, 5))
            losses_m.update(loss.item(), input.size(0))  # expect: SYNC001
            top1_m.update(acc1.item(), output.size(0))  # expect: SYNC001
            top5_m.update(acc5.item(), output.size(0))  # expect: SYNC001
    print(f"Test: Loss: {losses_m.avg:>6.3f}  Acc@1: {top1_m.avg:>7.3f}  Acc@5: {top5_m.avg:>7.3f}")
    return {"loss": losses_m.avg, "top1": top1_m.avg, "top5": top5_m.avg}


torch.manual_seed(42)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect: PORT001
num_classes, img_size = 10, 32
train_set = TensorDataset(torch.randn(48, 3, img_size, img_size), torch.randint(0, num_classes, (48,)))
val_set = TensorDataset(torch.randn(32, 3, img_size, img_size), torch.randint(0, num_classes, (32,)))
loader_train = DataLoader(train_set, batch_size=16, shuffle=True, drop_last=True)
loader_eval = DataLoader(val_set, batch_size=16, shuffle=False)

config = ConvNextConfig(num_channels=3, patch_size=2, num_stages=3, hidden_sizes=[32, 64, 128], depths=[1, 1, 2],
                        drop_path_rate=0.1, num_labels=num_classes, image_size=img_size)
model = ConvNextForImageClassification(config)
model.to(device)
model.to(memory_format=torch.channels_last)

optimizer = torch.optim.AdamW(param_groups_weight_decay(model, 0.05), lr=4e-3)
num_epochs = 2
lr_scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=num_epochs)
train_loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
validate_loss_fn = nn.CrossEntropyLoss()

for epoch in range(num_epochs):
    train_one_epoch(epoch, model, loader_train, optimizer, train_loss_fn, device)
    eval_metrics = validate(model, loader_eval, validate_loss_fn, device)
    lr_scheduler.step()
    print(f"epoch {epoch}: top1 {eval_metrics['top1']:.2f}")
