"""Continued pre-training of a small Mistral with the Hugging Face `Trainer`, written the way a
tuned run_clm.py setup looks once the usual advice has been applied: texts packed into fixed
blocks by `group_texts` (input_ids and labels only: no padding, no attention_mask),
`default_data_collator`, the default (sdpa) attention, `gradient_checkpointing=True`, a cosine
schedule with warmup, `logging_nan_inf_filter=False` and logging every 50 steps (so nothing is
read back inside these few steps), `dataloader_drop_last=True`, fused AdamW and clipping at 1.0
(the defaults)."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import random
import tempfile

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (AutoModelForCausalLM, MistralConfig, PreTrainedTokenizerFast, Trainer, TrainingArguments,
                          default_data_collator, set_seed)

WORDS = ("the a an one two some every this that my your our cat dog bird fish horse child teacher farmer "
         "city river house garden road field book letter song story sat ran walked flew swam read wrote "
         "sang found lost saw heard made took gave kept opened closed on in under over near behind across "
         "through into from with without and but then so because while after before quickly slowly "
         "quietly loudly happily sadly today yesterday tomorrow again never always often red green blue "
         "old young big small warm cold bright dark good bad new long short").split()
block_size = 48


def build_tokenizer():
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                   model_input_names=["input_ids"])


def group_texts(examples):
    concatenated = {k: sum(examples[k], []) for k in examples.keys()}
    total_length = (len(concatenated["input_ids"]) // block_size) * block_size
    result = {k: [t[i: i + block_size] for i in range(0, total_length, block_size)] for k, t in concatenated.items()}
    result["labels"] = result["input_ids"].copy()
    return result


set_seed(0)
tokenizer = build_tokenizer()
rng = random.Random(0)
texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120))) + " </s>" for _ in range(60)]
lm_datasets = group_texts(tokenizer(texts))
train_dataset = [{k: lm_datasets[k][i] for k in lm_datasets} for i in range(48)]

config = MistralConfig(vocab_size=len(tokenizer), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=256,
                       bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
model = AutoModelForCausalLM.from_config(config)

training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(prefix="mistral-clm-"),
    per_device_train_batch_size=8,
    num_train_epochs=1,
    learning_rate=3e-4,
    lr_scheduler_type="cosine",
    warmup_steps=1,
    weight_decay=0.1,
    gradient_checkpointing=True,
    logging_steps=50,
    logging_nan_inf_filter=False,
    dataloader_drop_last=True,
    save_strategy="no",
    report_to="none",
    seed=0,
)
trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=train_dataset,
    data_collator=default_data_collator,
    processing_class=tokenizer,
)
result = trainer.train()  # expect: SYNC001, FUSE001, FUSE003, FUSE005, CONTIG002, CONTIG001[attn_implementation], SYNC001[non_blocking]
print(f"{result.global_step} steps, train loss {result.training_loss:.4f}")
