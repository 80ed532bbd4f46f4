# CUDA003: torch.cuda APIs, imported or called.
import os
import torch  # expect: CUDA006
from torch.cuda.amp import GradScaler  # expect: CUDA003
from torch.cuda import nvtx  # expect: CUDA003

use_gpu = torch.cuda.is_available()  # expect: CUDA003


def setup():
    torch.cuda.manual_seed_all(0)  # expect: CUDA003
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # expect: CUDA003
    start = torch.cuda.Event(enable_timing=True)  # expect: CUDA003
    torch.cuda.synchronize()  # expect: CUDA003
    torch.cuda.nvtx.range_push("step")  # expect: CUDA003
    return start, GradScaler, nvtx
