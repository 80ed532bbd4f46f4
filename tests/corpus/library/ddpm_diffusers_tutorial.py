"""An unconditional DDPM trained the way the diffusers "Train a diffusion model" tutorial trains it
(docs/source/en/tutorials/basic_training.md), as a plain loop without accelerate: a TrainingConfig
dataclass, a UNet2DModel with one plain and one attention down/up block, DDPMScheduler(1000),
torch AdamW, get_cosine_schedule_with_warmup from diffusers.optimization, a DataLoader over images in
[-1, 1] (random 3x16x16 images here instead of the butterflies), and in the loop: noise,
random timesteps on the images' device, add_noise, predict the noise, MSE, clip to 1.0, step, and
the tutorial's progress-bar logs (loss.detach().item(), the learning rate) printed every 2 steps.
Tiny model so that it runs in a few seconds on a CPU; nothing is downloaded or written."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from diffusers import DDPMScheduler, UNet2DModel
from diffusers.optimization import get_cosine_schedule_with_warmup
from torch.utils.data import DataLoader, Dataset


@dataclass
class TrainingConfig:
    image_size = 16  # the generated image resolution
    train_batch_size = 8
    num_epochs = 1
    learning_rate = 1e-4
    lr_warmup_steps = 2
    log_every = 2
    num_images = 64
    seed = 0


config = TrainingConfig()


class RandomImages(Dataset):
    """Stands in for the tutorial's transformed dataset: images already normalized to [-1, 1]."""

    def __init__(self, n, size):
        g = torch.Generator().manual_seed(config.seed)
        self.images = torch.rand(n, 3, size, size, generator=g) * 2 - 1

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i]


torch.manual_seed(config.seed)
train_dataloader = DataLoader(RandomImages(config.num_images, config.image_size),
                              batch_size=config.train_batch_size, shuffle=True)

model = UNet2DModel(
    sample_size=config.image_size,  # the target image resolution
    in_channels=3,  # the number of input channels, 3 for RGB images
    out_channels=3,  # the number of output channels
    layers_per_block=1,  # how many ResNet layers to use per UNet block
    block_out_channels=(32, 64),  # the number of output channels for each UNet block
    norm_num_groups=8,
    down_block_types=(
        "DownBlock2D",  # a regular ResNet downsampling block
        "AttnDownBlock2D",  # a ResNet downsampling block with spatial self-attention
    ),
    up_block_types=(
        "AttnUpBlock2D",  # a ResNet upsampling block with spatial self-attention
        "UpBlock2D",  # a regular ResNet upsampling block
    ),
)

noise_scheduler = DDPMScheduler(num_train_timesteps=1000)

optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
lr_scheduler = get_cosine_schedule_with_warmup(
    optimizer=optimizer,
    num_warmup_steps=config.lr_warmup_steps,
    num_training_steps=(len(train_dataloader) * config.num_epochs),
)

device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: PORT001
model.to(device)

global_step = 0
model.train()
for epoch in range(config.num_epochs):
    for step, batch in enumerate(train_dataloader):
        clean_images = batch.to(device)  # expect: SYNC001[non_blocking]
        # Sample noise to add to the images
        noise = torch.randn(clean_images.shape, device=clean_images.device)
        bs = clean_images.shape[0]

        # Sample a random timestep for each image
        timesteps = torch.randint(
            0, noise_scheduler.config.num_train_timesteps, (bs,), device=clean_images.device, dtype=torch.int64
        )

        # Add noise to the clean images according to the noise magnitude at each timestep
        # (this is the forward diffusion process)
        noisy_images = noise_scheduler.add_noise(clean_images, noise, timesteps)

        # Predict the noise residual
        noise_pred = model(noisy_images, timesteps, return_dict=False)[0]  # expect: CONTIG002, CONTIG001
        loss = F.mse_loss(noise_pred, noise)
        loss.backward()

        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()

        if global_step % config.log_every == 0:
            logs = {"loss": loss.detach().item(), "lr": lr_scheduler.get_last_lr()[0], "step": global_step}  # expect: SYNC001
            print(f"epoch {epoch} {logs}")
        global_step += 1
