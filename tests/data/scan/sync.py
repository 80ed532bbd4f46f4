# SYNC101: host-device syncs inside loops.
import torch
import torch_npu


def train(model, loader, opt):
    total = 0.0
    for step, (x, y) in enumerate(loader):
        loss = model(x, y)
        loss.backward()
        total += loss.item()  # expect: SYNC101
        preds = model.logits.argmax(-1).cpu()  # expect: SYNC101
        arr = x.numpy()  # expect: SYNC101
        ids = y.tolist()  # expect: SYNC101
        print(loss)  # expect: SYNC101
        print(f"step {step} loss {loss}")  # expect: SYNC101
        print("step", step)  # no tensor: fine
        lv = float(loss)  # expect: SYNC101
        n = int(step)  # not a tensor name: fine
        norms = [g.norm().item() for g in model.grads]  # expect: SYNC101
    first = loss.item()  # outside the loop: fine
    while total < 10:
        total += loss.sum().item()  # expect: SYNC101
    return total, first, preds, arr, ids, lv, n, norms


def collate(batch):
    out = []
    for b in batch:
        out.append(int(b))  # not a train/step function and not a tensor name: fine
        print(b)
    return out


def train_epoch_logged(loader, model):
    for batch in loader:
        loss = model(batch)
        lossf = loss.item() * 4  # expect: SYNC101
        print(f"loss {lossf:.4f}")  # a Python float: no second finding
        pred = model.logits.argmax(-1).cpu()  # expect: SYNC101
        print(pred)  # a host copy: the .cpu() above was the wait
        print(f"mean pred {pred.float().mean()}")  # computed from the host copy: no sync


def train_with_grad_norm_log(model, loader, opt, params):
    for step, batch in enumerate(loader):
        model(batch).backward()
        grad_norm = float(sum(p.grad.norm() for p in model.parameters()))  # expect: SYNC101
        print(f"{step} {float(sum([p.grad.norm() for p in params])):.3f}")  # expect: SYNC101
        biggest = float(max(p.grad.abs().max() for p in params))  # expect: SYNC101
        count = int(sum(1 for p in params if p.grad is not None))  # Python ints summed: fine
        opt.step()
    return grad_norm, biggest, count
