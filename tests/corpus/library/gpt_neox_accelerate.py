"""Pre-training a small GPT-NeoX (Pythia-style config) with Hugging Face Accelerate, written like
accelerate's by_feature/gradient_accumulation.py example and transformers'
run_clm_no_trainer.py: a pre-tokenized token stream (a uint16 array, as read from a .bin file)
cut into fixed blocks, `default_data_collator`, `Accelerator(gradient_accumulation_steps=2)`,
`accelerator.prepare`, `with accelerator.accumulate(model)`, `accelerator.backward(loss)`,
`accelerator.clip_grad_norm_` when gradients are synced, AdamW with the usual no-decay groups,
a cosine schedule from `get_scheduler`, a running loss kept on the device, and the loss printed
with `accelerator.print` after every optimizer step. Batches hold input_ids and labels only."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, default_data_collator, get_scheduler

block_size = 64
per_device_train_batch_size = 4
gradient_accumulation_steps = 2
num_train_epochs = 1
learning_rate = 6e-4
weight_decay = 0.1

set_seed(42)
accelerator = Accelerator(gradient_accumulation_steps=gradient_accumulation_steps)

# a pre-tokenized corpus: one long uint16 stream, as np.memmap(path, dtype=np.uint16) would give
vocab_size = 512
tokens = np.random.default_rng(0).integers(0, vocab_size, size=48 * block_size + 17, dtype=np.uint16)
n_blocks = len(tokens) // block_size
train_dataset = [{"input_ids": tokens[i * block_size:(i + 1) * block_size].astype(np.int64),
                  "labels": tokens[i * block_size:(i + 1) * block_size].astype(np.int64)} for i in range(n_blocks)]
train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=default_data_collator,
                              batch_size=per_device_train_batch_size)

config = GPTNeoXConfig(vocab_size=vocab_size, hidden_size=128, intermediate_size=512, num_hidden_layers=2,
                       num_attention_heads=4, max_position_embeddings=256, rotary_pct=0.25,
                       bos_token_id=0, eos_token_id=0)
model = GPTNeoXForCausalLM(config)

no_decay = ["bias", "layer_norm.weight", "layernorm.weight"]
optimizer_grouped_parameters = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
     "weight_decay": weight_decay},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
]
optimizer = torch.optim.AdamW(optimizer_grouped_parameters, lr=learning_rate)
max_train_steps = num_train_epochs * len(train_dataloader) // gradient_accumulation_steps
lr_scheduler = get_scheduler(name="cosine", optimizer=optimizer, num_warmup_steps=1,
                             num_training_steps=max_train_steps * accelerator.num_processes)

model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
    model, optimizer, train_dataloader, lr_scheduler
)

completed_steps = 0
for epoch in range(num_train_epochs):
    model.train()
    total_loss = 0
    for step, batch in enumerate(train_dataloader):  # expect: SYNC001[non_blocking]
        with accelerator.accumulate(model):
            outputs = model(**batch)  # expect: FUSE003, CONTIG002, CONTIG001[attn_implementation]
            loss = outputs.loss
            total_loss += loss.detach().float()
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            completed_steps += 1
            accelerator.print(f"epoch {epoch} step {completed_steps} loss {loss.item():.4f}")  # expect: SYNC001
    accelerator.print(f"epoch {epoch} done, {completed_steps} optimizer steps")
