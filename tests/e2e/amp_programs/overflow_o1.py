"""fp16 overflow planted for amp-check at O1: a matmul whose sums exceed 65504."""
import torch

torch.manual_seed(0)
a = torch.full((4, 512), 20.0)
b = torch.full((512, 4), 20.0)
c = a @ b  # PLANTED
print("done", bool(torch.isfinite(c).all()))
