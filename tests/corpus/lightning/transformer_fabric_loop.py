"""A language model trained with Lightning Fabric's manual loop, written like Lightning's
examples/fabric/language_model/train.py and the Fabric guide: the demo `Transformer` from
`lightning.pytorch.demos`, `L.Fabric(accelerator="cpu")`, `fabric.launch()`, `fabric.setup(model,
optimizer)`, `fabric.setup_dataloaders(...)`, `fabric.backward(loss)`, gradient clipping with
`fabric.clip_gradients(model, optimizer, max_norm=...)`, the loss printed with `fabric.print`
every `log_interval` iterations, and a validation pass after the epoch. `WikiText2` downloads its
text, so the corpus here is a made-up token stream cut into blocks the same way (input = block,
target = the block shifted by one token)."""
import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.demos import Transformer
from torch.utils.data import DataLoader, Dataset, random_split

hparams = {"batch_size": 16, "block_size": 35, "lr": 0.1, "max_norm": 0.5, "log_interval": 2, "max_epochs": 1}


class SyntheticText(Dataset):
    """Stands in for `WikiText2`: the same __len__/__getitem__ over one long token tensor."""

    def __init__(self, num_tokens: int = 4530, vocab_size: int = 128, block_size: int = 35):
        g = torch.Generator().manual_seed(0)
        # a noisy walk through the vocabulary, so that the next token is predictable
        steps = torch.randint(1, 4, (num_tokens,), generator=g)
        self.data = torch.cumsum(steps, dim=0) % vocab_size
        self.vocab_size = vocab_size
        self.block_size = block_size

    def __len__(self) -> int:
        return len(self.data) // self.block_size - 1

    def __getitem__(self, index: int):
        start = index * self.block_size
        end = start + self.block_size
        inputs = self.data[start:end]
        target = self.data[(start + 1):(end + 1)]
        return inputs, target


def get_dataloaders(dataset):
    n = len(dataset)
    train_dataset, val_dataset = random_split(dataset, [n - 32, 32], generator=torch.Generator().manual_seed(42))
    train_dataloader = DataLoader(train_dataset, batch_size=hparams["batch_size"], shuffle=True)
    val_dataloader = DataLoader(val_dataset, batch_size=hparams["batch_size"], shuffle=False)
    return train_dataloader, val_dataloader


def train_epoch(fabric, model, optimizer, train_dataloader, epoch):
    for batch_idx, batch in enumerate(train_dataloader):
        input, target = batch
        output = model(input, target)  # expect: SYNC001[mask], SYNC001, CONTIG001*2, CONTIG002*2
        loss = F.nll_loss(output, target.view(-1))
        fabric.backward(loss)
        fabric.clip_gradients(model, optimizer, max_norm=hparams["max_norm"])  # expect: SYNC001[error_if_nonfinite]
        optimizer.step()
        optimizer.zero_grad()

        if batch_idx % hparams["log_interval"] == 0:
            fabric.print(f"epoch: {epoch} - iteration: {batch_idx} - loss {loss.item():.4f}")  # expect: SYNC001


@torch.no_grad()
def validate(fabric, model, val_dataloader):
    fabric.print("Validating ...")
    model.eval()
    losses = torch.zeros(len(val_dataloader))
    for k, batch in enumerate(val_dataloader):
        input, target = batch
        output = model(input, target)
        loss = F.nll_loss(output, target.view(-1))
        losses[k] = loss.item()
    out = losses.mean()
    model.train()
    return out


def train(fabric, model, optimizer, train_dataloader, val_dataloader):
    for epoch in range(hparams["max_epochs"]):
        train_epoch(fabric, model, optimizer, train_dataloader, epoch)
        val_loss = validate(fabric, model, val_dataloader)
        fabric.print(f"val loss {val_loss.item():.4f}")


def main():
    L.seed_everything(42)

    fabric = L.Fabric(accelerator="cpu", devices=1)
    fabric.launch()

    # Data
    dataset = SyntheticText(block_size=hparams["block_size"])
    train_dataloader, val_dataloader = get_dataloaders(dataset)

    # Model
    model = Transformer(vocab_size=dataset.vocab_size, ninp=64, nhead=2, nhid=128, nlayers=2)

    # Optimizer
    optimizer = torch.optim.SGD(model.parameters(), lr=hparams["lr"])

    model, optimizer = fabric.setup(model, optimizer)
    train_dataloader, val_dataloader = fabric.setup_dataloaders(train_dataloader, val_dataloader)
    train(fabric, model, optimizer, train_dataloader, val_dataloader)


if __name__ == "__main__":
    main()
