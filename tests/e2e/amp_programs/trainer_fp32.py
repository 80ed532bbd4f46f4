"""A Hugging Face Trainer run left in fp32 (TrainingArguments without fp16/bf16), checked with
`amp-check --dtype fp16`: the program calls no GradScaler itself; the Trainer does when told
fp16=True, so that is the lever AMP004 must name (not a hand-written scaler loop)."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import tempfile

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments, set_seed


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, i):
        ids = torch.arange(16) * (i + 1) % 96 + 1
        return {"input_ids": ids, "labels": ids.clone()}


set_seed(0)
config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
model = LlamaForCausalLM(config)
args = TrainingArguments(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=4, max_steps=4,
                         learning_rate=1e-3, logging_steps=2, report_to=[], save_strategy="no",
                         use_cpu=True, dataloader_num_workers=0)
Trainer(model=model, args=args, train_dataset=Tokens()).train()  # PLANTED
