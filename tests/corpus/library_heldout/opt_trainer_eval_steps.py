"""Continued pre-training of a small OPT with the Hugging Face `Trainer`, written the way
transformers' examples/pytorch/language-modeling/run_clm.py writes it: texts tokenized, concatenated
and cut into fixed blocks by `group_texts` (the tokenizer's attention_mask kept, labels =
input_ids), `default_data_collator`, gradient accumulation, evaluation and logging every few steps
(`eval_strategy="steps"`), token accuracy from `compute_metrics` with
`preprocess_logits_for_metrics` (argmax on the device, as run_clm does), and the number of input
tokens seen tracked for the logs. The model is built from a config (OPT's defaults: ReLU, learned
positions, the sdpa attention); everything else is the Trainer's default."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import random
import tempfile

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (AutoModelForCausalLM, OPTConfig, PreTrainedTokenizerFast, Trainer, TrainerCallback,
                          TrainingArguments, default_data_collator, set_seed)

WORDS = ("the a an one two some every this that my your our cat dog bird fish horse child teacher farmer "
         "city river house garden road field book letter song story sat ran walked flew swam read wrote "
         "sang found lost saw heard made took gave kept opened closed on in under over near behind across "
         "through into from with without and but then so because while after before quickly slowly "
         "quietly loudly happily sadly today yesterday tomorrow again never always often red green blue "
         "old young big small warm cold bright dark good bad new long short").split()
block_size = 64


def build_tokenizer():
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   unk_token="<unk>", model_input_names=["input_ids", "attention_mask"])


def group_texts(examples):
    concatenated = {k: sum(examples[k], []) for k in examples.keys()}
    total_length = (len(concatenated["input_ids"]) // block_size) * block_size
    result = {k: [t[i: i + block_size] for i in range(0, total_length, block_size)] for k, t in concatenated.items()}
    result["labels"] = result["input_ids"].copy()
    return result


class StepPrinter(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        print(f"step {state.global_step}/{state.max_steps} epoch {state.epoch:.2f}")


def preprocess_logits_for_metrics(logits, labels):
    if isinstance(logits, tuple):
        logits = logits[0]
    return logits.argmax(dim=-1)


def compute_metrics(eval_preds):
    preds, labels = eval_preds
    labels = labels[:, 1:].reshape(-1)
    preds = preds[:, :-1].reshape(-1)
    return {"accuracy": float((preds == labels).mean())}


set_seed(0)
tokenizer = build_tokenizer()
rng = random.Random(0)
texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120))) + " </s>" for _ in range(80)]
lm_datasets = group_texts(tokenizer(texts))
blocks = [{k: lm_datasets[k][i] for k in lm_datasets} for i in range(len(lm_datasets["input_ids"]))]
train_dataset, eval_dataset = blocks[:48], blocks[48:56]

config = OPTConfig(vocab_size=len(tokenizer), hidden_size=128, ffn_dim=512, num_hidden_layers=2,
                   num_attention_heads=4, max_position_embeddings=256, word_embed_proj_dim=128,
                   pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                   eos_token_id=tokenizer.eos_token_id)
model = AutoModelForCausalLM.from_config(config)

training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(prefix="opt-clm-"),
    per_device_train_batch_size=4,
    per_device_eval_batch_size=4,
    gradient_accumulation_steps=2,
    num_train_epochs=1,
    learning_rate=5e-4,
    weight_decay=0.01,
    warmup_steps=1,
    eval_strategy="steps",
    eval_steps=2,
    logging_steps=2,
    include_num_input_tokens_seen=True,
    save_strategy="no",
    report_to="none",
    disable_tqdm=True,
    seed=0,
)
trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=train_dataset,
    eval_dataset=eval_dataset,
    processing_class=tokenizer,
    data_collator=default_data_collator,
    compute_metrics=compute_metrics,
    preprocess_logits_for_metrics=preprocess_logits_for_metrics,
    callbacks=[StepPrinter()],
)
train_result = trainer.train()  # expect: SYNC001[logging_nan_inf_filter], SYNC001[logging_steps], SYNC001[include_num_input_tokens_seen], SYNC001*2, SYNC001[non_blocking], CONTIG002, CONTIG001[attn_implementation]
print("train loss", train_result.training_loss, "tokens seen", trainer.state.num_input_tokens_seen)
print("eval accuracy", [h["eval_accuracy"] for h in trainer.state.log_history if "eval_accuracy" in h])
