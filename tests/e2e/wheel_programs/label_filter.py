# A classifier that drops ignored labels with torch.isin and ranks scores with a running
# log-sum-exp (the way sequence models and retrieval losses write it), in the functional style.
import argparse

import torch
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=3)
args = p.parse_args()

torch.manual_seed(0)
IGNORED = torch.tensor([0, 3])
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 5))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

for step in range(args.steps):
    x = torch.randn(24, 16)
    y = torch.randint(0, 5, (24,))
    logits = model(x)
    keep = ~torch.isin(y, IGNORED)  # WHEEL: isin
    loss = F.cross_entropy(logits, y, reduction="none")
    loss = (loss * keep).sum() / keep.sum().clamp(min=1)
    # A smooth "max over the sequence so far" term: logcumsumexp along the batch.
    running = torch.logcumsumexp(logits.log_softmax(-1), dim=0)  # WHEEL: logcumsumexp
    loss = loss + 1e-3 * running[-1].mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("done")
