import torch
import torch.nn as nn

from common_affinity import DIM, train

S = 6


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class Rotary(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(DIM, DIM)
        inv = 1.0 / (10000 ** (torch.arange(0, DIM, 2).float() / DIM))
        freqs = torch.outer(torch.arange(S).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos, self.sin = emb.cos(), emb.sin()
        self.inter_cos, self.inter_sin = freqs.repeat_interleave(2, -1).cos(), freqs.repeat_interleave(2, -1).sin()
        self.freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
        self.pair_cos, self.pair_sin = freqs.cos(), freqs.sin()

    def forward(self, x):
        x = self.inp(x)
        a = x * self.cos + rotate_half(x) * self.sin  # VARIANT rotate_half 1
        rot = torch.stack((-a[..., 1::2], a[..., ::2]), dim=-1).flatten(-2)
        b = a * self.inter_cos + rot * self.inter_sin  # VARIANT interleaved 1
        bc = torch.view_as_complex(b.float().reshape(*b.shape[:-1], -1, 2))
        c = torch.view_as_real(bc * self.freqs_cis).flatten(-2)  # VARIANT complex 1
        x0, x1 = c.reshape(*c.shape[:-1], -1, 2).unbind(-1)
        d = torch.stack((x0 * self.pair_cos - x1 * self.pair_sin, x1 * self.pair_cos + x0 * self.pair_sin), -1)  # VARIANT pairs 1
        d = d.flatten(-2)
        return d * self.cos + d.flip(-1) * self.sin  # NEARMISS flip


if __name__ == "__main__":
    train(Rotary(), lambda: torch.randn(2, S, DIM))
