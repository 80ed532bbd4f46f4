"""Fine-tuning a small Qwen2 causal LM with the Hugging Face `Trainer`, written the way the
transformers causal-language-modeling guide and SFT tutorials write it: a fast tokenizer, texts
of different lengths tokenized without padding, `DataCollatorForLanguageModeling(mlm=False)`
padding each batch to its longest text (labels = input_ids with padding set to -100), the model
built from a config with `attn_implementation="eager"`, and the Trainer's defaults for the
optimizer (fused AdamW), clipping (1.0) and the NaN/Inf loss filter, logging every step."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import random
import tempfile

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (AutoModelForCausalLM, DataCollatorForLanguageModeling, PreTrainedTokenizerFast,
                          Qwen2Config, Trainer, TrainingArguments, set_seed)

WORDS = ("the a an one two some every this that my your our cat dog bird fish horse child teacher farmer "
         "city river house garden road field book letter song story sat ran walked flew swam read wrote "
         "sang found lost saw heard made took gave kept opened closed on in under over near behind across "
         "through into from with without and but then so because while after before quickly slowly "
         "quietly loudly happily sadly today yesterday tomorrow again never always often red green blue "
         "old young big small warm cold bright dark good bad new long short").split()


def build_tokenizer():
    vocab = {"<pad>": 0, "<unk>": 1, "<s>": 2, "</s>": 3}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<s>", eos_token="</s>", model_input_names=["input_ids", "attention_mask"])


class TextDataset(torch.utils.data.Dataset):
    def __init__(self, tokenizer, texts, max_length=64):
        self.examples = [tokenizer(text, truncation=True, max_length=max_length) for text in texts]

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return self.examples[i]


set_seed(0)
tokenizer = build_tokenizer()
rng = random.Random(0)
texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 48))) for _ in range(64)]
train_dataset = TextDataset(tokenizer, texts)
data_collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)

config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128,
                     pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                     eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=True)
model = AutoModelForCausalLM.from_config(config, attn_implementation="eager")

training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(prefix="qwen2-clm-"),
    per_device_train_batch_size=8,
    num_train_epochs=1,
    learning_rate=5e-4,
    weight_decay=0.01,
    warmup_steps=2,
    logging_steps=1,
    save_strategy="no",
    report_to="none",
    disable_tqdm=True,
    seed=0,
)
trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=train_dataset,
    data_collator=data_collator,
    processing_class=tokenizer,
)
trainer.train()  # expect: SYNC001[logging_nan_inf_filter], SYNC001[logging_steps], SYNC001[attn_implementation], DYNSHAPE001[pad_to_multiple_of], FUSE001, FUSE003, FUSE004[attn_implementation], FUSE005, CONTIG002, CONTIG001[attn_implementation], SYNC001[non_blocking]
print("final loss", trainer.state.log_history[-1]["train_loss"])
