"""Image classification with a small ViT and the Hugging Face `Trainer`, written the way the
transformers image-classification guide writes it: a dataset of (image tensor, label) examples
(here random 32x32 images standing in for decoded, normalized pictures), a `collate_fn` that stacks
`pixel_values` and builds `labels`, `remove_unused_columns=False`, evaluation once per epoch with a
NumPy accuracy in `compute_metrics`, warmup, label smoothing,
logging every 10 steps, and the Trainer's defaults otherwise (fused AdamW, clipping at 1.0, the NaN/Inf
loss filter, the default attention implementation). A callback prints each step."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import tempfile

import numpy as np
import torch
from transformers import (Trainer, TrainerCallback, TrainingArguments, ViTConfig, ViTForImageClassification,
                          set_seed)

labels = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
label2id = {name: i for i, name in enumerate(labels)}
id2label = {i: name for i, name in enumerate(labels)}


class ImageDataset(torch.utils.data.Dataset):
    """Examples as the guide's `transforms` leave them: {"pixel_values": CxHxW float tensor, "label": int}."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.images = torch.randn(n, 3, 32, 32, generator=g)
        self.targets = torch.randint(0, len(labels), (n,), generator=g).tolist()

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return {"pixel_values": self.images[i], "label": self.targets[i]}


def collate_fn(examples):
    pixel_values = torch.stack([example["pixel_values"] for example in examples])
    labels = torch.tensor([example["label"] for example in examples])
    return {"pixel_values": pixel_values, "labels": labels}


def compute_metrics(eval_pred):
    predictions = np.argmax(eval_pred.predictions, axis=1)
    return {"accuracy": float((predictions == eval_pred.label_ids).mean())}


class StepPrinter(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        print(f"step {state.global_step}/{state.max_steps} epoch {state.epoch:.2f}")


set_seed(0)
train_ds = ImageDataset(16, seed=1)
val_ds = ImageDataset(16, seed=2)

config = ViTConfig(image_size=32, patch_size=4, num_channels=3, hidden_size=64, num_hidden_layers=2,
                   num_attention_heads=4, intermediate_size=128, num_labels=len(labels), id2label=id2label,
                   label2id=label2id)
model = ViTForImageClassification(config)

training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(prefix="vit-cls-"),
    remove_unused_columns=False,
    eval_strategy="epoch",
    save_strategy="no",
    learning_rate=5e-4,
    per_device_train_batch_size=8,
    per_device_eval_batch_size=8,
    num_train_epochs=3,
    warmup_steps=1,
    label_smoothing_factor=0.1,
    logging_steps=10,
    report_to="none",
    disable_tqdm=True,
    seed=0,
)
trainer = Trainer(
    model=model,
    args=training_args,
    data_collator=collate_fn,
    train_dataset=train_ds,
    eval_dataset=val_ds,
    compute_metrics=compute_metrics,
    callbacks=[StepPrinter()],
)
train_results = trainer.train()  # expect: SYNC001[logging_nan_inf_filter], SYNC001, SYNC001[non_blocking], CONTIG002*2, CONTIG001[attn_implementation]
print("train loss", train_results.training_loss)
print("eval accuracy", [h["eval_accuracy"] for h in trainer.state.log_history if "eval_accuracy" in h])
