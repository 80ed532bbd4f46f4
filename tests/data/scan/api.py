# API101/API102: torch APIs whose aten ops have no NPU kernel (or run on AI CPU).
# torch-npu: 2.1.0
import torch
import torch_npu


def f(x, y):
    a = torch.isin(x, y)  # expect: API102
    b = torch.gcd(x, y)  # expect: API102
    c = torch.logcumsumexp(x, 0)  # expect: API101
    d = torch.sinc(x)  # expect: API102
    e = torch.add(x, y)  # supported: fine
    g = torch.nanmedian(x)  # expect: API102
    return a, b, c, d, e, g
