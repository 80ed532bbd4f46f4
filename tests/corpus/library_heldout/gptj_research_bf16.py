"""Pre-training a small GPT-J in the style of research code (nanoGPT / OLMo-like training scripts)
rather than a library's loop: a dataclass of hyper-parameters, a memory-mapped-style uint16 token
stream cut into fixed windows by a Dataset, a DataLoader with `pin_memory=True` and batches moved with
`non_blocking=True`, the model built from a config (GPT-J's defaults: eager attention, interleaved
partial rotary, gelu_new), bf16 autocast, a custom loss (cross entropy in fp32 plus PaLM's z-loss),
a NaN guard on the loss, `clip_grad_norm_`, AdamW with `fused` only on CUDA (as nanoGPT's
configure_optimizers does), a warmup + cosine schedule written by hand, an EMA of the weights, and a
log line every `log_interval` steps."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import GPTJConfig, GPTJForCausalLM


@dataclass
class TrainConfig:
    vocab_size: int = 512
    seq_len: int = 64
    batch_size: int = 8
    max_steps: int = 8
    warmup_steps: int = 2
    lr: float = 6e-4
    min_lr: float = 6e-5
    weight_decay: float = 0.1
    betas: tuple = (0.9, 0.95)
    grad_clip: float = 1.0
    z_loss_coef: float = 1e-4
    ema_decay: float = 0.99
    log_interval: int = 1
    seed: int = 1337


class TokenWindows(Dataset):
    """Fixed windows of a pre-tokenized stream (np.memmap(path, dtype=np.uint16) in the real script)."""

    def __init__(self, tokens, seq_len):
        self.tokens, self.seq_len = tokens, seq_len

    def __len__(self):
        return (len(self.tokens) - 1) // self.seq_len

    def __getitem__(self, i):
        chunk = torch.from_numpy(self.tokens[i * self.seq_len: (i + 1) * self.seq_len + 1].astype(np.int64))
        return chunk[:-1], chunk[1:]


class EMA:
    """Exponential moving average of the trainable weights, kept for evaluation."""

    def __init__(self, model, decay):
        self.decay = decay
        self.shadow = [p.detach().clone() for p in model.parameters() if p.requires_grad]

    @torch.no_grad()
    def update(self, model):
        params = [p for p in model.parameters() if p.requires_grad]
        for shadow, param in zip(self.shadow, params):
            shadow.lerp_(param.detach(), 1.0 - self.decay)  # expect: FUSE007


def lm_loss(logits, targets, z_loss_coef):
    logits = logits.float()
    ce = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
    z_loss = z_loss_coef * torch.logsumexp(logits, dim=-1).pow(2).mean()
    return ce + z_loss, ce.detach(), z_loss.detach()


def get_lr(step, cfg):
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = (step - cfg.warmup_steps) / max(1, cfg.max_steps - cfg.warmup_steps)
    return cfg.min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (cfg.lr - cfg.min_lr)


def configure_optimizer(model, cfg, device_type):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    use_fused = device_type == "cuda"
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, fused=use_fused)


cfg = TrainConfig()
torch.manual_seed(cfg.seed)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect: PORT001
ctx = torch.autocast(device_type=device.type, dtype=torch.bfloat16)

tokens = np.random.default_rng(cfg.seed).integers(0, cfg.vocab_size, size=cfg.max_steps * cfg.batch_size * cfg.seq_len + 1,
                                                   dtype=np.uint16)
loader = DataLoader(TokenWindows(tokens, cfg.seq_len), batch_size=cfg.batch_size, shuffle=True, drop_last=True,
                    pin_memory=True, num_workers=0)

config = GPTJConfig(vocab_size=cfg.vocab_size, n_positions=256, n_embd=128, n_layer=2, n_head=4, rotary_dim=8,
                    bos_token_id=0, eos_token_id=0)
model = GPTJForCausalLM(config).to(device)
optimizer = configure_optimizer(model, cfg, device.type)
ema = EMA(model, cfg.ema_decay)

model.train()
train_iter = iter(loader)
t0 = time.time()
for step in range(cfg.max_steps):
    lr = get_lr(step, cfg)
    for group in optimizer.param_groups:
        group["lr"] = lr
    x, y = next(train_iter)
    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    with ctx:
        logits = model(input_ids=x).logits  # expect: FUSE003, FUSE004[attn_implementation], FUSE006[activation_function], CONTIG002*2, CONTIG001[attn_implementation], SYNC001[attn_implementation]
        loss, ce, z_loss = lm_loss(logits, y, cfg.z_loss_coef)
    if not torch.isfinite(loss):  # expect: SYNC001
        raise RuntimeError(f"non-finite loss at step {step}")
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    optimizer.step()  # expect: FUSE007[fused]
    optimizer.zero_grad(set_to_none=True)
    ema.update(model)
    if step % cfg.log_interval == 0:
        dt, t0 = time.time() - t0, time.time()
        print(f"step {step:4d} | loss {ce.item():.4f} | z {z_loss.item():.2e} | gnorm {grad_norm.item():.3f} | "  # expect: SYNC001
              f"lr {lr:.2e} | {dt * 1000:.0f} ms")
