# Method-call style: a majority vote over neighbours (Tensor.mode) and a scatter-sum pooling
# of node features into graphs (Tensor.scatter_reduce, the way GNN code pools), in a module.
import argparse

import torch


class Pool(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, h, graph_of_node, n_graphs):
        h = self.proj(h)
        out = torch.zeros(n_graphs, h.shape[1])
        index = graph_of_node.unsqueeze(1).expand_as(h)
        return out.scatter_reduce(0, index, h, reduce="sum")  # WHEEL: scatter_sum


def vote(neighbour_labels):
    return neighbour_labels.mode(dim=1).values  # WHEEL: mode


p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=3)
args = p.parse_args()
torch.manual_seed(0)
pool = Pool(8)
head = torch.nn.Linear(8, 3)
opt = torch.optim.SGD(list(pool.parameters()) + list(head.parameters()), lr=0.1)
for step in range(args.steps):
    h = torch.randn(12, 8)
    graph_of_node = torch.arange(12) // 4
    target = vote(torch.randint(0, 3, (3, 5)))
    loss = torch.nn.functional.cross_entropy(head(pool(h, graph_of_node, 3)), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("done")
