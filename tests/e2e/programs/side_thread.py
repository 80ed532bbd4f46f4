"""A training loop with a helper thread that also runs torch ops (a prefetcher, a logger). The
capture records the thread that runs the steps and must say that the other one is not."""
import threading
import time

import torch

stop = threading.Event()


def prefetch():
    while not stop.is_set():
        torch.ones(4).sum()
        time.sleep(0.005)


helper = threading.Thread(target=prefetch, name="prefetch")
helper.start()
torch.manual_seed(0)
model = torch.nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    opt.zero_grad()
stop.set()
helper.join()
print("ok")
