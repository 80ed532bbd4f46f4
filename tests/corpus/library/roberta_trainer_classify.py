"""Text classification with a small RoBERTa and the Hugging Face `Trainer`, written the way the
transformers sequence-classification guide writes it: sentences tokenized with truncation and no
padding, `DataCollatorWithPadding` padding each batch to its longest sentence (so every batch
carries an `attention_mask` with padding in it), a NumPy `compute_metrics` for accuracy,
evaluation and logging once per epoch, weight decay 0.01, everything else at its default
(default attention implementation, fused AdamW, clipping at 1.0, NaN/Inf loss filter)."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import random
import tempfile

import numpy as np
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (AutoModelForSequenceClassification, DataCollatorWithPadding, PreTrainedTokenizerFast,
                          RobertaConfig, Trainer, TrainingArguments, set_seed)

POSITIVE = "good great lovely fine happy bright warm kind".split()
NEGATIVE = "bad awful poor sad dull cold rude broken".split()
NEUTRAL = ("the a this that film book meal room staff service story ending music view was were is "
           "very quite rather and but so it they we our their").split()


def build_tokenizer():
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for word in POSITIVE + NEGATIVE + NEUTRAL:
        vocab.setdefault(word, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   unk_token="<unk>", model_input_names=["input_ids", "attention_mask"])


def make_review(rng):
    label = rng.randint(0, 1)
    words = [rng.choice(NEUTRAL) for _ in range(rng.randint(6, 40))]
    for _ in range(rng.randint(1, 3)):
        words.insert(rng.randrange(len(words)), rng.choice(POSITIVE if label else NEGATIVE))
    return " ".join(words), label


class ReviewDataset(torch.utils.data.Dataset):
    def __init__(self, tokenizer, reviews):
        self.items = []
        for text, label in reviews:
            encoded = tokenizer(text, truncation=True, max_length=60)
            encoded["labels"] = label
            self.items.append(encoded)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    predictions = np.argmax(logits, axis=-1)
    return {"accuracy": float((predictions == labels).mean())}


set_seed(0)
tokenizer = build_tokenizer()
rng = random.Random(0)
train_dataset = ReviewDataset(tokenizer, [make_review(rng) for _ in range(24)])
eval_dataset = ReviewDataset(tokenizer, [make_review(rng) for _ in range(16)])
data_collator = DataCollatorWithPadding(tokenizer=tokenizer)

config = RobertaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=256, num_hidden_layers=2,
                       num_attention_heads=4, max_position_embeddings=66, type_vocab_size=1,
                       pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                       eos_token_id=tokenizer.eos_token_id, num_labels=2,
                       id2label={0: "NEGATIVE", 1: "POSITIVE"}, label2id={"NEGATIVE": 0, "POSITIVE": 1})
model = AutoModelForSequenceClassification.from_config(config)

training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(prefix="roberta-cls-"),
    learning_rate=2e-4,
    per_device_train_batch_size=8,
    per_device_eval_batch_size=8,
    num_train_epochs=2,
    weight_decay=0.01,
    eval_strategy="epoch",
    logging_strategy="epoch",
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
    data_collator=data_collator,
    compute_metrics=compute_metrics,
)
trainer.train()  # expect: SYNC001[logging_nan_inf_filter], SYNC001*2, DYNSHAPE001[pad_to_multiple_of], CONTIG002, CONTIG001[attn_implementation], SYNC001[non_blocking]
print("eval accuracy", trainer.state.log_history[-2].get("eval_accuracy"))
