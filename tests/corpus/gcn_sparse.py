"""The Kipf & Welling GCN the way pygcn writes it: a row-normalised sparse COO adjacency,
GraphConvolution layers with torch.spmm, full-batch training with Adam and accuracy on a
masked node set."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        stdv = 1.0 / math.sqrt(out_features)
        self.weight.data.uniform_(-stdv, stdv)
        self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.spmm(adj, support)  # expect: FALLBACK002
        return output + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


def normalized_adjacency(n, edges):
    rows = np.concatenate([edges[0], edges[1], np.arange(n)])
    cols = np.concatenate([edges[1], edges[0], np.arange(n)])
    deg = np.bincount(rows, minlength=n).astype(np.float32)
    values = 1.0 / deg[rows]
    indices = torch.from_numpy(np.vstack([rows, cols]).astype(np.int64))
    return torch.sparse_coo_tensor(indices, torch.from_numpy(values), (n, n)).coalesce()


torch.manual_seed(0)
rng = np.random.default_rng(0)
n_nodes, n_feat, n_class = 60, 12, 3
adj = normalized_adjacency(n_nodes, rng.integers(0, n_nodes, size=(2, 150)))
features = torch.randn(n_nodes, n_feat)
labels = torch.randint(0, n_class, (n_nodes,))
idx_train = torch.arange(40)
device = "cpu"
model = GCN(n_feat, 16, n_class, dropout=0.5).to(device)
features, adj, labels, idx_train = features.to(device), adj.to(device), labels.to(device), idx_train.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
for epoch in range(6):
    model.train()
    optimizer.zero_grad()
    output = model(features, adj)
    loss_train = F.nll_loss(output[idx_train], labels[idx_train])
    preds = output[idx_train].max(1)[1].type_as(labels)
    acc_train = preds.eq(labels[idx_train]).double().sum() / len(idx_train)  # expect: FALLBACK002
    loss_train.backward()
    optimizer.step()  # expect: FUSE007:torch1
    print("Epoch: {:04d}".format(epoch + 1), "loss_train: {:.4f}".format(loss_train.item()),  # expect: SYNC001
          "acc_train: {:.4f}".format(acc_train.item()))  # expect: SYNC001
