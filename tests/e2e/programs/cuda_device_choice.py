# Planted: the device is chosen with torch.cuda.is_available(), the way most tutorials write it.
# A CPU machine records the CPU branch; on an Ascend machine the same file would train on the
# CPU too (cuda is not available there): PORT001 at the choice, pointing at `npu-doctor scan`.
import torch

from common import parse_args, train

args = parse_args()
device = "cuda" if torch.cuda.is_available() else "cpu"  # PLANTED


def step(model, i):
    model.to(device)
    x = torch.randn(8, 32, device=device)
    return model(x).pow(2).mean()


train(step, args.steps)
