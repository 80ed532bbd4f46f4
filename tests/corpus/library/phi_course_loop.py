"""A causal LM trained with a hand-written PyTorch loop in the style of the Hugging Face course
("A full training" / "Training a causal language model from scratch"): texts tokenized, then
concatenated and cut into fixed blocks by `group_texts` (labels = input_ids, an all-ones
attention_mask kept from the tokenizer), `max_train_samples` as in run_clm, a DataLoader with
`default_data_collator`, `model(**batch)`, `outputs.loss.backward()`, torch AdamW,
`get_scheduler("linear", ...)`, and the loss printed with `loss.item()` every step. The model is
a small Phi built from a config (Phi's defaults: gelu_new, partial rotary, the sdpa attention)."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import random

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from torch.utils.data import DataLoader
from transformers import (PhiConfig, PhiForCausalLM, PreTrainedTokenizerFast, default_data_collator, get_scheduler,
                          set_seed)

WORDS = ("the a an one two some every this that my your our cat dog bird fish horse child teacher farmer "
         "city river house garden road field book letter song story sat ran walked flew swam read wrote "
         "sang found lost saw heard made took gave kept opened closed on in under over near behind across "
         "through into from with without and but then so because while after before quickly slowly "
         "quietly loudly happily sadly today yesterday tomorrow again never always often red green blue "
         "old young big small warm cold bright dark good bad new long short").split()
block_size = 32
max_train_samples = 48


def build_tokenizer():
    vocab = {"<|endoftext|>": 0, "<unk>": 1}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>", unk_token="<unk>",
                                   model_input_names=["input_ids", "attention_mask"])


def tokenize_function(examples):
    return tokenizer(examples["text"])


def group_texts(examples):
    concatenated = {k: sum(examples[k], []) for k in examples.keys()}
    total_length = (len(concatenated["input_ids"]) // block_size) * block_size
    result = {k: [t[i: i + block_size] for i in range(0, total_length, block_size)] for k, t in concatenated.items()}
    result["labels"] = result["input_ids"].copy()
    return result


set_seed(0)
tokenizer = build_tokenizer()
rng = random.Random(0)
raw = {"text": [" ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 60))) + " <|endoftext|>"
                for _ in range(60)]}
lm_datasets = group_texts(tokenize_function(raw))
train_dataset = [{k: lm_datasets[k][i] for k in lm_datasets} for i in range(max_train_samples)]
train_dataloader = DataLoader(train_dataset, shuffle=True, batch_size=8, collate_fn=default_data_collator)

config = PhiConfig(vocab_size=len(tokenizer), hidden_size=128, intermediate_size=512, num_hidden_layers=2,
                   num_attention_heads=4, max_position_embeddings=128, pad_token_id=None,
                   bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
model = PhiForCausalLM(config)

optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
num_epochs = 1
num_training_steps = num_epochs * len(train_dataloader)
lr_scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0, num_training_steps=num_training_steps)

device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")  # expect: PORT001
model.to(device)

model.train()
for epoch in range(num_epochs):
    for step, batch in enumerate(train_dataloader):
        batch = {k: v.to(device) for k, v in batch.items()}  # expect: SYNC001[non_blocking]
        outputs = model(**batch)  # expect: SYNC001[attention_mask], FUSE003, FUSE006[hidden_act], CONTIG002, CONTIG001[attn_implementation]
        loss = outputs.loss
        loss.backward()

        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        print(f"epoch {epoch} step {step} loss {loss.item():.4f}")  # expect: SYNC001
