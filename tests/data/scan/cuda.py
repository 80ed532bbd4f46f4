# CUDA001-CUDA006: CUDA device strings and APIs. Lines with findings carry an expect comment.
import os
import torch  # expect: CUDA006
import torch.distributed as dist
from torch.cuda.amp import GradScaler  # expect: CUDA003
from torch.cuda import nvtx  # expect: CUDA003

device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: CUDA001, CUDA003
other_device = torch.device("cuda:1")  # expect: CUDA001
torch.backends.cudnn.benchmark = True  # expect: CUDA005
torch.backends.cudnn.deterministic = True  # expect: CUDA005
label = "cuda"  # a string that is not a device argument: left alone
mode = os.environ.get("MODE", "cuda")


def setup(model):
    model = model.cuda()  # expect: CUDA002
    model.to(device="cuda")  # expect: CUDA001
    dist.init_process_group(backend="nccl")  # expect: CUDA004
    dist.init_process_group("nccl")  # expect: CUDA004
    torch.cuda.manual_seed_all(0)  # expect: CUDA003
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # expect: CUDA003
    start = torch.cuda.Event(enable_timing=True)  # expect: CUDA003
    torch.cuda.synchronize()  # expect: CUDA003
    torch.cuda.nvtx.range_push("step")  # expect: CUDA003
    if x.device.type == "cuda":  # expect: CUDA001
        pass
    y = x.npu()  # already NPU: nothing to say
    z = x.cuda(non_blocking=True)  # npu-doctor: ignore[CUDA002]
    w = x.cuda()  # npu-doctor: ignore
    state = torch.load("ckpt.pt", map_location="cuda")  # expect: CUDA001
    return model, start, y, z, w, state
