"""A BERT-style classifier fine-tuned from a DataLoader: self-attention written the
Hugging Face way (transpose_for_scores), an additive padding mask, LayerNorm and GELU modules,
AdamW at its defaults, and accuracy read back every step. 44 samples in batches of 16: the
last batch of each epoch is shorter."""
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

hidden, heads, seq_len, vocab, labels = 32, 4, 12, 100, 3


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_size = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dropout = nn.Dropout(0.1)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (heads, self.head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        query_layer = self.transpose_for_scores(self.query(hidden_states))
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))  # expect: CONTIG002
        attention_scores = attention_scores / math.sqrt(self.head_size)
        attention_scores = attention_scores + attention_mask
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)  # expect: FUSE004
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs, value_layer)  # expect: CONTIG002
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()  # expect: CONTIG001
        return context_layer.view(context_layer.size()[:-2] + (hidden,))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = SelfAttention()
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))
        self.out_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask):
        x = self.attn_norm(x + self.attention(x, mask))
        return self.out_norm(x + self.intermediate(x))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(seq_len, hidden)
        self.layers = nn.ModuleList([Layer() for _ in range(2)])
        self.classifier = nn.Linear(hidden, labels)

    def forward(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.size(1), device=input_ids.device)
        x = self.embeddings(input_ids) + self.position(positions)
        extended = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, extended)
        return self.classifier(x[:, 0])


torch.manual_seed(0)
device = "cpu"
ids = torch.randint(0, vocab, (44, seq_len))
mask = torch.ones(44, seq_len, dtype=torch.long)
mask[:, 9:] = 0
targets = torch.randint(0, labels, (44,))
loader = DataLoader(TensorDataset(ids, mask, targets), batch_size=16, shuffle=True)
model = Classifier().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(2):
    for input_ids, attention_mask, label in loader:  # expect: DYNSHAPE001
        input_ids, attention_mask, label = input_ids.to(device), attention_mask.to(device), label.to(device)  # expect: SYNC001
        logits = model(input_ids, attention_mask)
        loss = loss_fn(logits, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # expect: FUSE007:torch1
        accuracy = (logits.argmax(-1) == label).float().mean().item()  # expect: SYNC001
        print(f"epoch {epoch} loss {loss.item():.4f} acc {accuracy:.3f}")  # expect: SYNC001
