"""Model-parallel setup written the LLaMA reference way: torch.distributed module calls,
LOCAL_RANK from the environment, a device string built with %, a backend chosen in a helper."""
import os

import torch  # expect: CUDA006
import torch.distributed


def pick_backend():
    backend = "nccl" if torch.cuda.is_available() else "gloo"  # expect: CUDA004, CUDA003
    return backend


def setup(seed: int = 1):
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(pick_backend())
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)  # expect: CUDA003
    torch.manual_seed(seed)
    log_tag = "cuda"  # a label that never reaches a device argument: left alone
    device = "cuda:%d" % local_rank  # expect: CUDA001
    return local_rank, device


def load(ckpt_path):
    local_rank, device = setup()
    checkpoint = torch.load(ckpt_path, map_location="cpu")
    torch.set_default_dtype(torch.float16)
    model = torch.nn.Linear(4, 4).to(device)
    model.load_state_dict(checkpoint, strict=False)
    x = torch.ones(1, 4, device="cuda:" + str(local_rank))  # expect: CUDA001
    return model(x)
