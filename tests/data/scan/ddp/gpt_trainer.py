"""A GPT trainer written the nanoGPT way: config globals, DDP from RANK, autocast context,
fused AdamW chosen by device type. Scanned by tests/e2e/test_scan.py (scan, then --fix)."""
import math
import os
import time
from contextlib import nullcontext

import numpy as np
import torch  # expect: CUDA006
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

out_dir = "out"
batch_size = 12
block_size = 256
learning_rate = 6e-4
max_iters = 200
backend = 'nccl'  # 'nccl', 'gloo', etc.  # expect: CUDA004
device = 'cuda'  # 'cpu', 'cuda', 'cuda:0', 'cuda:1'  # expect: CUDA001
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'  # expect: CUDA003, CUDA003
compile = False

ddp = int(os.environ.get('RANK', -1)) != -1
if ddp:
    init_process_group(backend=backend)
    ddp_rank = int(os.environ['RANK'])
    ddp_local_rank = int(os.environ['LOCAL_RANK'])
    device = f'cuda:{ddp_local_rank}'  # expect: CUDA001
    torch.cuda.set_device(device)  # expect: CUDA003
    master_process = ddp_rank == 0
    seed_offset = ddp_rank
else:
    master_process = True
    seed_offset = 0

torch.manual_seed(1337 + seed_offset)
torch.backends.cuda.matmul.allow_tf32 = True  # expect: CUDA005
torch.backends.cudnn.allow_tf32 = True  # expect: CUDA005
device_type = 'cuda' if 'cuda' in device else 'cpu'  # expect: CUDA001, CUDA001
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)


def get_batch(data):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    if device_type == 'cuda':  # expect: CUDA001
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    else:
        x, y = x.to(device), y.to(device)
    return x, y


class Block(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = torch.nn.Linear(n, n)

    def forward(self, x):
        return self.fc(x)


model = Block(64)
model.to(device)
use_fused = device_type == 'cuda'  # expect: CUDA001
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, fused=use_fused)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))  # expect: CUDA003
if ddp:
    model = DDP(model, device_ids=[ddp_local_rank])

data = np.zeros(10000, dtype=np.uint16)
for it in range(max_iters):
    lr = learning_rate * 0.5 * (1.0 + math.cos(math.pi * it / max_iters))
    for group in optimizer.param_groups:
        group['lr'] = lr
    X, Y = get_batch(data)
    with ctx:
        loss = model(X.float()).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    if master_process and it % 10 == 0:
        lossf = loss.item()  # expect: SYNC101
        print(f"iter {it}: loss {lossf:.4f}, time {time.time():.2f}")

if ddp:
    destroy_process_group()
