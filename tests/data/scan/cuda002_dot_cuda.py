# CUDA002: `.cuda()` moves, and the two ways of silencing one line.
import torch  # expect: CUDA006


def setup(model):
    return model.cuda()  # expect: CUDA002


def move(x):
    y = x.npu()  # already NPU: nothing to say
    z = x.cuda(non_blocking=True)  # npu-doctor: ignore[CUDA002]
    w = x.cuda()  # npu-doctor: ignore
    return y, z, w
