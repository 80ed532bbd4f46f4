# AMP101: fp16 autocast in a training file with no GradScaler.
import torch
import torch_npu


def train(model, loader, opt):
    for x, y in loader:
        with torch.autocast(device_type="npu", dtype=torch.float16):  # expect: AMP101
            loss = model(x, y)
        loss.backward()
        opt.step()
    with torch.autocast("npu", dtype=torch.bfloat16):  # bf16 needs no scaler
        pass
    with torch.autocast("cpu"):  # cpu autocast is bf16
        pass
