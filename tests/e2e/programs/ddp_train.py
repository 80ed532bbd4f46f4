"""A DistributedDataParallel training loop for `npu-doctor run -- torchrun --nproc_per_node 2`
(issue 29: every rank captured, a cluster report). gloo on the CPU. Each rank reads the loss
with .item() every step (SYNC001 on every rank); rank 1 alone also masks a tensor by a
data-dependent boolean (rank-only findings). (A rank slower on the host is not a slow rank
here: DDP's all-reduce makes every rank wait for it, so the steps take the same time.)"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    steps = int(os.environ.get("DDP_STEPS", "5"))
    for _ in range(steps):
        x = torch.randn(16, 32)
        if rank == 1:
            x = x[x[:, 0] > 0]   # PLANTED: boolean-mask indexing, a data-dependent shape on rank 1 only
        loss = model(x).pow(2).mean()   # PLANTED-SHAPES: the ops fed the masked x (rank 1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if loss.item() != loss.item():   # PLANTED-SYNC: a host read of the loss every step, every rank
            raise SystemExit("nan loss")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
