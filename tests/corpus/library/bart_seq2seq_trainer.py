"""A small BART trained for summarization with `Seq2SeqTrainer`, written the way the transformers
summarization guide writes it: documents and summaries tokenized with truncation and no padding
(`text_target=` for the labels), `DataCollatorForSeq2Seq(tokenizer, model=model)` padding each
batch (labels with -100) and building `decoder_input_ids` from the labels,
`Seq2SeqTrainingArguments` with `optim="adafactor"` (transformers' Adafactor, as T5/BART recipes
use), logging every other step, everything else at its default."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import random
import tempfile

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (AutoModelForSeq2SeqLM, BartConfig, DataCollatorForSeq2Seq, PreTrainedTokenizerFast,
                          Seq2SeqTrainer, Seq2SeqTrainingArguments, set_seed)

WORDS = ("the a an one two some every this that council city river bridge school market farmer teacher "
         "report plan budget road station park museum library storm rain flood fire vote meeting week "
         "year month opened closed approved rejected delayed announced repaired built moved raised cut "
         "new old local national large small early late after before during because and but with for "
         "on in at by from over under").split()


def build_tokenizer():
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   unk_token="<unk>", model_input_names=["input_ids", "attention_mask"])


def make_example(rng):
    document = [rng.choice(WORDS) for _ in range(rng.randint(16, 60))]
    summary = document[::rng.randint(3, 5)][:12]
    return " ".join(document), " ".join(summary)


class SummaryDataset(torch.utils.data.Dataset):
    def __init__(self, tokenizer, pairs):
        self.items = []
        for document, summary in pairs:
            model_inputs = tokenizer(document, max_length=64, truncation=True)
            labels = tokenizer(text_target=summary, max_length=16, truncation=True)
            model_inputs["labels"] = labels["input_ids"]
            self.items.append(model_inputs)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


set_seed(0)
tokenizer = build_tokenizer()
rng = random.Random(0)
train_dataset = SummaryDataset(tokenizer, [make_example(rng) for _ in range(48)])

config = BartConfig(vocab_size=len(tokenizer), d_model=128, encoder_layers=2, decoder_layers=2,
                    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256,
                    max_position_embeddings=128, pad_token_id=tokenizer.pad_token_id,
                    bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                    decoder_start_token_id=tokenizer.eos_token_id, forced_eos_token_id=tokenizer.eos_token_id)
model = AutoModelForSeq2SeqLM.from_config(config)
data_collator = DataCollatorForSeq2Seq(tokenizer=tokenizer, model=model)

training_args = Seq2SeqTrainingArguments(
    output_dir=tempfile.mkdtemp(prefix="bart-sum-"),
    learning_rate=1e-3,
    per_device_train_batch_size=8,
    num_train_epochs=1,
    weight_decay=0.01,
    optim="adafactor",
    logging_steps=2,
    save_strategy="no",
    report_to="none",
    disable_tqdm=True,
    seed=0,
)
trainer = Seq2SeqTrainer(
    model=model,
    args=training_args,
    train_dataset=train_dataset,
    processing_class=tokenizer,
    data_collator=data_collator,
)
trainer.train()  # expect: SYNC001[logging_nan_inf_filter], SYNC001[logging_steps], SYNC001, DYNSHAPE001[pad_to_multiple_of], FUSE007[optim], CONTIG002, CONTIG001[attn_implementation], SYNC001[non_blocking]
print("final loss", trainer.state.log_history[-1]["train_loss"])
