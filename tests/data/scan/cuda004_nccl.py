# CUDA004: the NCCL backend, named by keyword or by position.
import torch  # expect: CUDA006
import torch.distributed as dist


def setup():
    dist.init_process_group(backend="nccl")  # expect: CUDA004
    dist.init_process_group("nccl")  # expect: CUDA004
