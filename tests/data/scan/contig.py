# CONTIG101: permuted/transposed views fed to matmul/linear/conv.
import torch
import torch.nn.functional as F
import torch_npu


def forward(x, w, q, k, v):
    a = x.permute(0, 2, 1, 3) @ w  # expect: CONTIG101
    b = torch.matmul(q, k.transpose(-2, -1))  # expect: CONTIG101
    kt = k.transpose(1, 2)
    c = torch.bmm(q, kt)  # expect: CONTIG101
    d = F.linear(x.transpose(1, 2), w)  # expect: CONTIG101
    e = q @ w.T  # expect: CONTIG101
    f = x.permute(0, 2, 1).contiguous() @ w  # made contiguous: fine
    kt = kt.contiguous()
    g = torch.bmm(q, kt)  # reassigned contiguous: fine
    h = q.matmul(k.permute(0, 1, 3, 2))  # expect: CONTIG101
    return a, b, c, d, e, f, g, h
