"""Fine-tuning a small Whisper for speech recognition with Hugging Face Accelerate, written the way
the "Fine-Tune Whisper" blog post prepares the data (a `DataCollatorSpeechSeq2SeqWithPadding` that pads
the log-mel features with the feature extractor and the transcripts with the tokenizer, labels
padded with -100, a leading decoder-start token stripped) and the way accelerate's no_trainer examples
write the loop: `accelerator.prepare`, `accelerator.backward`, `accelerator.clip_grad_norm_`, AdamW,
a linear schedule from `get_scheduler`, the running loss kept on the device and read once per epoch,
a progress line per step. The model is built from a small config (Whisper's defaults otherwise: sdpa
attention, GELU, no SpecAugment); the features are random log-mel frames of the fixed length Whisper
expects."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from tokenizers import Tokenizer, models, pre_tokenizers, processors
from torch.utils.data import DataLoader
from transformers import (PreTrainedTokenizerFast, WhisperConfig, WhisperFeatureExtractor,
                          WhisperForConditionalGeneration, get_scheduler)

WORDS = ("yes no one two three four five six seven eight nine ten left right up down go stop on off "
         "the a to of and in is it you that he was for with as his they at be this from have or by "
         "house river morning evening today tomorrow open close call play read write").split()
num_mel_bins, max_source_positions = 16, 32


def build_tokenizer():
    vocab = {"<|endoftext|>": 0, "<|startoftranscript|>": 1, "<|en|>": 2, "<|transcribe|>": 3,
             "<|notimestamps|>": 4, "<unk>": 5}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.post_processor = processors.TemplateProcessing(
        single="<|startoftranscript|> <|en|> <|transcribe|> <|notimestamps|> $A <|endoftext|>",
        special_tokens=[("<|startoftranscript|>", 1), ("<|en|>", 2), ("<|transcribe|>", 3),
                        ("<|notimestamps|>", 4), ("<|endoftext|>", 0)])
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<|endoftext|>", eos_token="<|endoftext|>",
                                   bos_token="<|startoftranscript|>", unk_token="<unk>",
                                   model_input_names=["input_ids", "attention_mask"])


def prepare_dataset(rng, n):
    examples = []
    for _ in range(n):
        # log-mel frames of a 0.64 s clip, as feature_extractor(audio, sampling_rate=16000) would give
        input_features = np.random.default_rng(rng.randrange(1 << 30)).standard_normal(
            (num_mel_bins, 2 * max_source_positions)).astype(np.float32)
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))
        examples.append({"input_features": input_features, "labels": tokenizer(sentence).input_ids})
    return examples


@dataclass
class DataCollatorSpeechSeq2SeqWithPadding:
    feature_extractor: Any
    tokenizer: Any
    decoder_start_token_id: int

    def __call__(self, features):
        input_features = [{"input_features": feature["input_features"]} for feature in features]
        batch = self.feature_extractor.pad(input_features, return_tensors="pt")
        label_features = [{"input_ids": feature["labels"]} for feature in features]
        labels_batch = self.tokenizer.pad(label_features, return_tensors="pt")  # expect: DYNSHAPE001[pad_to_multiple_of]
        labels = labels_batch["input_ids"].masked_fill(labels_batch.attention_mask.ne(1), -100)
        if (labels[:, 0] == self.decoder_start_token_id).all().cpu().item():
            labels = labels[:, 1:]
        batch["labels"] = labels
        return batch


set_seed(0)
accelerator = Accelerator()
tokenizer = build_tokenizer()
feature_extractor = WhisperFeatureExtractor(feature_size=num_mel_bins, sampling_rate=16000,
                                            chunk_length=1, n_samples=10240)
rng = random.Random(0)
train_dataset = prepare_dataset(rng, 48)

config = WhisperConfig(vocab_size=len(tokenizer), num_mel_bins=num_mel_bins, d_model=64, encoder_layers=2,
                       decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                       decoder_ffn_dim=128, max_source_positions=max_source_positions, max_target_positions=64,
                       pad_token_id=0, bos_token_id=1, eos_token_id=0, decoder_start_token_id=1,
                       begin_suppress_tokens=None)
model = WhisperForConditionalGeneration(config)
model.generation_config.forced_decoder_ids = None
data_collator = DataCollatorSpeechSeq2SeqWithPadding(feature_extractor, tokenizer, config.decoder_start_token_id)

train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=data_collator, batch_size=8)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
num_train_epochs = 1
max_train_steps = num_train_epochs * len(train_dataloader)
lr_scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=1, num_training_steps=max_train_steps)

model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(model, optimizer, train_dataloader, lr_scheduler)

completed_steps = 0
for epoch in range(num_train_epochs):
    model.train()
    total_loss = 0
    for step, batch in enumerate(train_dataloader):  # expect: SYNC001[non_blocking]
        outputs = model(**batch)  # expect: CONTIG002, CONTIG001[attn_implementation], CONTIG001
        loss = outputs.loss
        total_loss += loss.detach().float()
        accelerator.backward(loss)
        accelerator.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        completed_steps += 1
        accelerator.print(f"epoch {epoch} step {completed_steps}/{max_train_steps} lr {lr_scheduler.get_last_lr()[0]:.2e}")
    accelerator.print(f"epoch {epoch}: train loss {total_loss.item() / len(train_dataloader):.4f}")
