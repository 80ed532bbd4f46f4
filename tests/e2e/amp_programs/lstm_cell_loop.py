"""The PyTorch examples' time-sequence model: two LSTMCells stepped over 40 time steps in a
Python loop, trained with Adam. amp-check measures each line's calls 1-4, 8, 16 and 32 of a
step; the other calls run their shadow and write nothing."""
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS_IN_TIME = 40


class Sequence(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)
        self.hidden = hidden

    def forward(self, x):
        h_t = torch.zeros(x.size(0), self.hidden)
        c_t = torch.zeros(x.size(0), self.hidden)
        h_t2 = torch.zeros(x.size(0), self.hidden)
        c_t2 = torch.zeros(x.size(0), self.hidden)
        outputs = []
        for input_t in x.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            outputs.append(self.linear(h_t2))  # LOOP
        return torch.cat(outputs, dim=1)


torch.manual_seed(0)
model = Sequence()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.sin(torch.arange(STEPS_IN_TIME + 1, dtype=torch.float32) / 4.0).repeat(8, 1)
for step in range(3):
    out = model(x[:, :-1])
    loss = F.mse_loss(out, x[:, 1:])
    opt.zero_grad()
    loss.backward()
    opt.step()
print("done", step)
