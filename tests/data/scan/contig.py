# CONTIG101: permuted/transposed views fed to matmul/linear/conv. A transpose of the last two
# dims into a matmul is a flag to the NPU kernel (no copy) and is not reported.
import torch
import torch.nn.functional as F
import torch_npu


def forward(x, w, q, k, v):
    a = x.permute(0, 2, 1, 3) @ w  # expect: CONTIG101
    b = torch.matmul(q, k.transpose(-2, -1))  # last two dims: free
    kt = k.transpose(1, 2)
    c = torch.bmm(q, kt)  # bmm operands are 3-D, so (1, 2) are the last two: free
    kp = k.transpose(0, 1)
    c2 = torch.bmm(q, kp)  # expect: CONTIG101
    d = F.linear(x.transpose(1, 2), w)  # expect: CONTIG101
    e = q @ w.T  # a matrix's .T: free
    f = x.permute(0, 2, 1).contiguous() @ w  # made contiguous: fine
    kt = kt.contiguous()
    g = torch.bmm(q, kt)  # reassigned contiguous: fine
    h = q.matmul(k.permute(0, 1, 3, 2))  # the last two dims swapped: free
    i = q.matmul(k.permute(0, 2, 1, 3))  # expect: CONTIG101
    return a, b, c, c2, d, e, f, g, h, i
