# Trains without a GradScaler; tiny gradients (loss scaled by 1e-6) underflow in fp16.
import torch

from amp_common import Positive, train

torch.manual_seed(0)
train(Positive(), lambda y: y * 1e-6)  # PLANTED
