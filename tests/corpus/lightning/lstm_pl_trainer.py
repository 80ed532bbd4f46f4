"""Sequence classification with an LSTM, written in the `import lightning.pytorch as pl` style of
the Lightning docs: a `pl.LightningModule` with `save_hyperparameters()`, torchmetrics `Accuracy`
objects updated in training_step/validation_step and logged as metric objects (the training one
with `on_step=False, on_epoch=True`), the learning rate of a OneCycleLR schedule (stepped every
batch) logged from training_step, a custom `Callback` that keeps the loss of every batch for a
plot and prints the epoch's accuracy, plain DataLoaders passed to `trainer.fit`, and
`pl.Trainer(gradient_clip_val=..., log_every_n_steps=1, ...)` with a CSVLogger and no progress
bar (a script run). Short epochs for a quick run: two epochs of three batches, each followed by
two validation batches. The sequences are made up: each class is a sine wave of its own
frequency in three noisy channels."""
import math
import tempfile

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
import torchmetrics
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.loggers import CSVLogger
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_sequences(num_samples, seq_len=24, num_classes=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, num_classes, (num_samples,), generator=g)
    t = torch.arange(seq_len, dtype=torch.float32)
    freq = 0.15 + 0.1 * labels.float()
    phase = 2 * math.pi * torch.rand(num_samples, generator=g)
    wave = torch.sin(freq[:, None] * t[None, :] + phase[:, None])
    x = torch.stack([wave, wave.roll(3, dims=1), -wave], dim=-1)
    x = x + 0.3 * torch.randn(num_samples, seq_len, 3, generator=g)
    return TensorDataset(x, labels)


class LossHistory(Callback):
    """Keeps the loss of every training batch (for a plot after training)."""

    def __init__(self):
        self.losses = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.losses.append(outputs["loss"].item())  # expect: SYNC001

    def on_train_epoch_end(self, trainer, pl_module):
        acc = trainer.callback_metrics["train_acc"]
        print(f"epoch {trainer.current_epoch}: train_acc {acc:.3f}")


class LSTMClassifier(pl.LightningModule):
    def __init__(self, input_size=3, hidden_size=48, num_layers=2, num_classes=4, lr=3e-3, dropout=0.1):
        super().__init__()
        self.save_hyperparameters()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers, batch_first=True, dropout=dropout)
        self.classifier = nn.Linear(hidden_size, num_classes)
        self.train_acc = torchmetrics.Accuracy(task="multiclass", num_classes=num_classes)
        self.val_acc = torchmetrics.Accuracy(task="multiclass", num_classes=num_classes)

    def forward(self, x):
        _, (h_n, _) = self.lstm(x)
        return self.classifier(h_n[-1])

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        preds = torch.argmax(logits, dim=1)
        self.train_acc(preds, y)  # expect: SYNC001[validate_args]
        self.log("train_loss", loss, prog_bar=True)
        self.log("train_acc", self.train_acc, on_step=False, on_epoch=True)
        self.log("lr", self.lr_schedulers().get_last_lr()[0])  # expect: SYNC001
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        preds = torch.argmax(logits, dim=1)
        self.val_acc(preds, y)  # expect: SYNC001[validate_args]
        self.log("val_loss", loss, prog_bar=True)
        self.log("val_acc", self.val_acc, prog_bar=True)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.01)
        scheduler = torch.optim.lr_scheduler.OneCycleLR(
            optimizer, max_lr=self.hparams.lr, total_steps=self.trainer.estimated_stepping_batches
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


if __name__ == "__main__":
    pl.seed_everything(7)
    train_loader = DataLoader(make_sequences(96, seed=0), batch_size=32, shuffle=True)
    val_loader = DataLoader(make_sequences(64, seed=1), batch_size=32)
    model = LSTMClassifier()
    history = LossHistory()
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=2,
        gradient_clip_val=0.5,
        log_every_n_steps=1,
        logger=CSVLogger(save_dir=tempfile.mkdtemp(prefix="lstm-cls-"), name="lstm"),
        callbacks=[history],
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, train_loader, val_loader)  # expect: SYNC001[prog_bar], SYNC001[log_every_n_steps]
    print("losses", [round(v, 3) for v in history.losses])
