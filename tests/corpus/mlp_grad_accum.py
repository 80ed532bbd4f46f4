"""A Hugging Face-style training loop in plain PyTorch: gradient accumulation over micro-batches
with the loss divided by the accumulation steps, gradient clipping, AdamW with a LambdaLR
warmup, a running loss kept as a tensor and read once per optimizer step, and an evaluation
pass every other step with a larger batch under torch.no_grad()."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, d_in=64, d_hidden=128, n_classes=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, d_hidden), nn.GELU(), nn.LayerNorm(d_hidden),
                                 nn.Linear(d_hidden, n_classes))

    def forward(self, x):
        return self.net(x)


torch.manual_seed(0)
device = "cpu"
model = Classifier().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 3))
accum, micro_bs, eval_bs = 4, 8, 32
train_x, train_y = torch.randn(512, 64), torch.randint(0, 10, (512,))
eval_x, eval_y = torch.randn(64, 64), torch.randint(0, 10, (64,))
running = torch.zeros((), device=device)
for step in range(6):
    model.train()
    for micro in range(accum):
        idx = torch.randint(0, len(train_x), (micro_bs,))
        xb, yb = train_x[idx].to(device), train_y[idx].to(device)  # expect: SYNC001
        loss = F.cross_entropy(model(xb), yb) / accum
        loss.backward()
        running += loss.detach()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()  # expect: FUSE007:torch1
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step} loss {running.item():.4f}")  # expect: SYNC001
    running.zero_()
    if step % 2 == 1:
        model.eval()
        with torch.no_grad():
            xb, yb = eval_x[:eval_bs].to(device), eval_y[:eval_bs].to(device)  # expect: SYNC001
            acc = (model(xb).argmax(-1) == yb).float().mean()  # expect: DYNSHAPE001
        print(f"eval acc {acc.item():.3f}")  # expect: SYNC001
