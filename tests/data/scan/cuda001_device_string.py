# CUDA001: "cuda" device strings where a device is meant. Lines with findings carry an expect
# comment; CUDA006 (`import torch_npu` missing) comes with every file the fixes touch.
import os
import torch  # expect: CUDA006

device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: CUDA001, CUDA003
other_device = torch.device("cuda:1")  # expect: CUDA001
label = "cuda"  # a string that is not a device argument: left alone
mode = os.environ.get("MODE", "cuda")


def place(model, x):
    model.to(device="cuda")  # expect: CUDA001
    if x.device.type == "cuda":  # expect: CUDA001
        pass
    state = torch.load("ckpt.pt", map_location="cuda")  # expect: CUDA001
    return model, state
