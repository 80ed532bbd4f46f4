"""BERT from transformers (random weights, small config) fine-tuned for classification in train
mode, dropout on (hidden and attention dropout 0.1), with a hand loop as the HF course writes
it: amp-check measured dropout's uninitialised mask memory as AMP001/AMP002 errors that changed
from run to run."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from transformers import BertConfig, BertForSequenceClassification

torch.manual_seed(0)
config = BertConfig(vocab_size=200, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=128, max_position_embeddings=64, num_labels=3,
                    hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
model = BertForSequenceClassification(config)
model.train()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
for step in range(4):
    input_ids = torch.randint(1, 200, (8, 24))
    attention_mask = torch.ones_like(input_ids)
    attention_mask[:, 20:] = 0
    labels = torch.randint(0, 3, (8,))
    outputs = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
    outputs.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print("step", step, "loss", round(float(outputs.loss), 4))
