"""The PyTorch examples' polynomial regression: features built with pow and cat, a target
function that reads a host constant with .item(), a single Linear layer updated by hand
through param.data, and a loop that runs until the loss (read with .item()) is small."""
from itertools import count

import torch
import torch.nn.functional as F

POLY_DEGREE = 4
torch.manual_seed(0)
W_target = torch.randn(POLY_DEGREE, 1) * 5
b_target = torch.randn(1) * 5


def make_features(x):
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    return x.mm(W_target) + b_target.item()


def get_batch(batch_size=32):
    random = torch.randn(batch_size)
    x = make_features(random)
    y = f(x)
    return x, y


fc = torch.nn.Linear(W_target.size(0), 1)
for batch_idx in count(1):
    batch_x, batch_y = get_batch()
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()  # expect: SYNC001
    output.backward()
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)
    if loss < 1e-3 or batch_idx >= 6:
        break
print("Loss: {:.6f} after {} batches".format(loss, batch_idx))
