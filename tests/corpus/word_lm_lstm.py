"""The PyTorch examples' word language model: batchify into columns, get_batch slices of
bptt, an LSTM with repackaged hidden state, gradient clipping and a hand-written SGD update
through p.data, total_loss accumulated with .item()."""
import torch
import torch.nn as nn

ntokens, emsize, nhid, bptt, batch_size = 50, 16, 16, 8, 4
device = torch.device("cpu")


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous().to(device)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(ntokens, emsize)
        self.rnn = nn.LSTM(emsize, nhid, 2, dropout=0.2)
        self.decoder = nn.Linear(nhid, ntokens)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, ntokens)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(2, bsz, nhid), weight.new_zeros(2, bsz, nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


torch.manual_seed(0)
train_data = batchify(torch.randint(0, ntokens, (4 * 8 * 6,)), batch_size)
model = RNNModel().to(device)
criterion = nn.NLLLoss()
lr, total_loss = 5.0, 0.0
model.train()
hidden = model.init_hidden(batch_size)
for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
    data, targets = get_batch(train_data, i)
    model.zero_grad()
    hidden = repackage_hidden(hidden)
    output, hidden = model(data, hidden)
    loss = criterion(output, targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)  # expect: FUSE007
    total_loss += loss.item()  # expect: SYNC001
print("loss", total_loss / (batch + 1))
