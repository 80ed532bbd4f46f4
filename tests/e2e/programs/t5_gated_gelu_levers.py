"""A T5 (gated-gelu, as T5 v1.1 and Flan-T5 configure it) trained with a hand-written loop: the
levers npu-doctor names must be ones T5 has (issue 45). T5 has no flash attention
(`_supports_flash_attn = False`) and its config has no `hidden_act`: its GELU is
`config.dense_act_fn`, derived from `feed_forward_proj`."""
import torch
from transformers import T5Config, T5ForConditionalGeneration

torch.manual_seed(0)
config = T5Config(vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=1, num_decoder_layers=1, num_heads=4,
                  feed_forward_proj="gated-gelu", decoder_start_token_id=0, pad_token_id=0)
model = T5ForConditionalGeneration(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    input_ids = torch.randint(1, 128, (4, 16))
    labels = torch.randint(1, 128, (4, 8))
    loss = model(input_ids=input_ids, labels=labels).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
