"""An MNIST classifier in Lightning's own tutorial style: a `LightningDataModule` (prepare_data /
setup / *_dataloader, a random_split for validation), a small CNN in a `LightningModule` whose
training_step logs loss and accuracy with `self.log_dict(..., prog_bar=True)`, a validation_step
that logs with `self.log_dict`, the gradient norms logged from `on_before_optimizer_step` with
`lightning.pytorch.utilities.grad_norm` (as the "track gradient norms" recipe of the docs does),
and `L.Trainer(...)` with the progress bar on and a CSVLogger. The images are made up here: ten
fixed 28x28 "digit" templates, each sample a noisy copy of its class's template (no download)."""
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.utilities import grad_norm
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split


class SyntheticMNISTDataModule(L.LightningDataModule):
    def __init__(self, batch_size: int = 32, num_samples: int = 640):
        super().__init__()
        self.batch_size = batch_size
        self.num_samples = num_samples

    def prepare_data(self):
        # MNIST(self.data_dir, train=True, download=True) would go here
        pass

    def setup(self, stage: str):
        g = torch.Generator().manual_seed(1234)
        templates = (torch.rand(10, 1, 28, 28, generator=g) > 0.7).float()
        labels = torch.randint(0, 10, (self.num_samples,), generator=g)
        images = templates[labels] + 0.5 * torch.randn(self.num_samples, 1, 28, 28, generator=g)
        images = (images - 0.1307) / 0.3081
        mnist_full = TensorDataset(images, labels)
        self.mnist_train, self.mnist_val = random_split(
            mnist_full, [512, 128], generator=torch.Generator().manual_seed(42)
        )

    def train_dataloader(self):
        return DataLoader(self.mnist_train, batch_size=self.batch_size, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.mnist_val, batch_size=self.batch_size)


class LitConvNet(L.LightningModule):
    def __init__(self, learning_rate: float = 1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(32 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(torch.flatten(x, 1))
        x = F.relu(self.fc1(x))
        return self.fc2(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean()
        self.log_dict({"train_loss": loss, "train_acc": acc}, prog_bar=True)
        return loss

    def on_before_optimizer_step(self, optimizer):
        # Compute the 2-norm for each layer
        norms = grad_norm(self, norm_type=2)  # expect: SYNC001
        self.log_dict(norms)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean()
        self.log_dict({"val_loss": loss, "val_acc": acc}, prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.learning_rate)


if __name__ == "__main__":
    L.seed_everything(42)
    dm = SyntheticMNISTDataModule(batch_size=32)
    model = LitConvNet(learning_rate=1e-3)
    trainer = L.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=1,
        limit_train_batches=8,
        limit_val_batches=2,
        logger=CSVLogger(save_dir=tempfile.mkdtemp(prefix="lit-mnist-")),
        enable_checkpointing=False,
    )
    trainer.fit(model, datamodule=dm)  # expect: SYNC001[prog_bar]
    print("val_acc", float(trainer.callback_metrics["val_acc"]))
