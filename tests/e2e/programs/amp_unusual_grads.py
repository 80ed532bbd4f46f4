"""Gradients amp-check's loss-scale histogram cannot read as plain real tensors: a complex
parameter (a learned spectral filter applied through torch.fft) and a sparse embedding
trained with SparseAdam. The run must end with every step recorded, no shim warning in the
program's stderr, and the complex gradients measured by magnitude."""
import torch
import torch.nn as nn

torch.manual_seed(21)
spectral = nn.Parameter(torch.randn(16, dtype=torch.complex64) * 0.1)
embed = nn.Embedding(50, 16, sparse=True)
head = nn.Linear(16, 1)
dense_opt = torch.optim.Adam([spectral] + list(head.parameters()), lr=1e-3)
sparse_opt = torch.optim.SparseAdam(list(embed.parameters()), lr=1e-2)
for step in range(5):
    ids = torch.randint(0, 50, (8,))
    signal = embed(ids)
    filtered = torch.fft.ifft(torch.fft.fft(signal.to(torch.complex64)) * spectral).real
    loss = head(filtered).pow(2).mean()
    dense_opt.zero_grad()
    sparse_opt.zero_grad()
    loss.backward()
    dense_opt.step()
    sparse_opt.step()
    print("step %d done" % step)
