# Planted: a program that never trains (an evaluation loop: no backward(), no optimizer), so no
# step ever ends: `run` must say that nothing was recorded, not report an all-clear.
import torch

from common import make_model, parse_args

args = parse_args()
model = make_model().eval()
correct = 0
with torch.no_grad():
    for batch in range(args.steps):
        x = torch.randn(16, 32)
        pred = model(x).argmax(dim=1)  # PLANTED
        correct += int((pred == 0).sum())
print("correct", correct)
