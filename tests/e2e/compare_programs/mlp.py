# A small training loop for `npu-doctor compare`: run once as is (the fp32 reference) and
# once with NPUD_TEST_PLANT=1, where the PLANTED line squeezes fc2's input through fp16 at a
# scale where it underflows (the kind of bug a stray .half() brings). The squeeze is on the
# forward values only (straight-through), so the gradients, and the weights of later steps,
# stay those of the reference up to ordinary drift.
import os

import torch

PLANT = os.environ.get("NPUD_TEST_PLANT") == "1"


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if PLANT:
            return self.fc2(h + ((h * 1e-7).half().float() * 1e7 - h).detach())  # PLANTED
        return self.fc2(h)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = torch.nn.Linear(8, 1)

    def forward(self, x):
        return self.head(torch.tanh(self.block(x)))


torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(6, 64, 16)
target = torch.randn(6, 64, 1)
for step in range(5):
    loss = torch.nn.functional.mse_loss(model(data[step]), target[step])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss %d %.10f" % (step, loss.item()))
