# Planted: exp of values above 11.1 overflows fp16 (e^11.1 = 66171 > 65504). Run at O2: the NPU
# autocast list keeps exp in fp32 at O1.
import torch

from amp_common import Positive, train


class Head(torch.nn.Module):
    def forward(self, h):
        return torch.exp(h * 0.1 + 11.0)  # PLANTED


torch.manual_seed(0)
model = torch.nn.Sequential(Positive(), Head())
train(model, lambda y: y / 1e5)
