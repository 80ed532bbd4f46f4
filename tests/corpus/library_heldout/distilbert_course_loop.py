"""Sentence-pair classification with a small DistilBERT and a hand-written PyTorch loop, written the
way the Hugging Face course writes "A full training" (chapter 3): pairs tokenized with truncation and
no padding, `DataCollatorWithPadding` as the DataLoader's `collate_fn`, torch AdamW at lr 5e-5,
`get_scheduler("linear")`, `batch = {k: v.to(device) ...}`, `outputs = model(**batch)`,
`outputs.loss.backward()`, and an evaluation pass whose predictions are collected batch by batch, as
`metric.add_batch(predictions=..., references=...)` does (the `evaluate` package is not installed; a
small Accuracy class does the same). Here the evaluation runs after every epoch and the loss is
printed every step."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import random

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors
from torch.utils.data import DataLoader
from transformers import (AutoModelForSequenceClassification, DataCollatorWithPadding, DistilBertConfig,
                          PreTrainedTokenizerFast, get_scheduler, set_seed)

WORDS = ("the a this that company city council report plan budget market price share quarter year "
         "said says rose fell grew cut raised announced expected reported agreed rejected approved "
         "on in at by for with after before over under about than its their new old higher lower "
         "more less first last two three million percent").split()


def build_tokenizer():
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
                                   sep_token="[SEP]", model_input_names=["input_ids", "attention_mask"])


def make_pair(rng):
    sentence1 = [rng.choice(WORDS) for _ in range(rng.randint(5, 24))]
    label = rng.randint(0, 1)
    if label:  # a paraphrase: the same words, a few swapped
        sentence2 = list(sentence1)
        for _ in range(2):
            sentence2[rng.randrange(len(sentence2))] = rng.choice(WORDS)
    else:
        sentence2 = [rng.choice(WORDS) for _ in range(rng.randint(5, 24))]
    return {"sentence1": " ".join(sentence1), "sentence2": " ".join(sentence2), "label": label}


def tokenize_function(example):
    return tokenizer(example["sentence1"], example["sentence2"], truncation=True)


class Accuracy:
    """What `evaluate.load("accuracy")` does with add_batch/compute."""

    def __init__(self):
        self.predictions, self.references = [], []

    def add_batch(self, predictions, references):
        pairs = torch.stack([predictions, references]).cpu()  # expect: SYNC001
        self.predictions += pairs[0].tolist()
        self.references += pairs[1].tolist()

    def compute(self):
        correct = sum(int(p == r) for p, r in zip(self.predictions, self.references))
        return {"accuracy": correct / max(len(self.references), 1)}


set_seed(42)
tokenizer = build_tokenizer()
rng = random.Random(0)
raw_datasets = {"train": [make_pair(rng) for _ in range(24)], "validation": [make_pair(rng) for _ in range(16)]}
tokenized_datasets = {}
for split, examples in raw_datasets.items():
    tokenized_datasets[split] = []
    for example in examples:
        features = dict(tokenize_function(example))
        features["labels"] = example["label"]
        tokenized_datasets[split].append(features)
data_collator = DataCollatorWithPadding(tokenizer=tokenizer)

train_dataloader = DataLoader(tokenized_datasets["train"], shuffle=True, batch_size=8, collate_fn=data_collator)
eval_dataloader = DataLoader(tokenized_datasets["validation"], batch_size=8, collate_fn=data_collator)

config = DistilBertConfig(vocab_size=len(tokenizer), dim=64, hidden_dim=256, n_layers=2, n_heads=4,
                          max_position_embeddings=128, pad_token_id=tokenizer.pad_token_id, num_labels=2)
model = AutoModelForSequenceClassification.from_config(config)

optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
num_epochs = 2
num_training_steps = num_epochs * len(train_dataloader)
lr_scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0, num_training_steps=num_training_steps)

device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")  # expect: PORT001
model.to(device)

for epoch in range(num_epochs):
    model.train()
    for step, batch in enumerate(train_dataloader):  # expect: DYNSHAPE001[pad_to_multiple_of]
        batch = {k: v.to(device) for k, v in batch.items()}  # expect: SYNC001[non_blocking]
        outputs = model(**batch)  # expect: SYNC001, CONTIG002, CONTIG001[attn_implementation]
        loss = outputs.loss
        loss.backward()

        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        print(f"epoch {epoch} step {step} loss {loss.item():.4f}")  # expect: SYNC001

    metric = Accuracy()
    model.eval()
    for batch in eval_dataloader:
        batch = {k: v.to(device) for k, v in batch.items()}  # expect: SYNC001[non_blocking]
        with torch.no_grad():
            outputs = model(**batch)  # expect: SYNC001, CONTIG002, CONTIG001[attn_implementation]

        logits = outputs.logits
        predictions = torch.argmax(logits, dim=-1)
        metric.add_batch(predictions=predictions, references=batch["labels"])
    print(f"epoch {epoch}:", metric.compute())
