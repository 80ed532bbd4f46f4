"""A ResNet-style image classifier the torchvision way: BasicBlocks with BatchNorm, a
DataLoader over an in-memory dataset, SGD with momentum, running loss and accuracy kept as
Python numbers, and a class-weighted loss whose weights come from NumPy (float64)."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class RandomImages(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 3, 16, 16, generator=g)
        self.y = torch.randint(0, 10, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = BasicBlock(16, 16)
        self.layer2 = BasicBlock(16, 32, stride=2)
        self.linear = nn.Linear(32, num_classes)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer2(self.layer1(out))
        out = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.linear(out)


device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: PORT001
torch.manual_seed(0)
trainloader = DataLoader(RandomImages(64), batch_size=16, shuffle=True, num_workers=0)
net = ResNet().to(device)
class_counts = np.arange(1, 11)
weights = torch.from_numpy(class_counts.sum() / class_counts).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
net.train()
train_loss, correct, total = 0.0, 0, 0
for batch_idx, (inputs, targets) in enumerate(trainloader):
    inputs, targets = inputs.to(device), targets.to(device)  # expect: SYNC001
    optimizer.zero_grad()
    outputs = net(inputs)
    loss = criterion(outputs, targets) * weights[targets].mean()  # expect: FALLBACK002
    loss.backward()
    optimizer.step()  # expect: FUSE007:torch1
    train_loss += loss.item()  # expect: SYNC001
    _, predicted = outputs.max(1)
    total += targets.size(0)
    correct += predicted.eq(targets).sum().item()  # expect: SYNC001
    print(batch_idx, "loss %.3f acc %.1f%%" % (train_loss / (batch_idx + 1), 100.0 * correct / total))
