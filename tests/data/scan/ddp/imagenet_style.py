"""A ResNet trainer written the way the PyTorch ImageNet example is: one process per GPU via
mp.spawn, the rank as the device, cudnn aliased, tensors checked with .is_cuda."""
import argparse

import torch  # expect: CUDA006
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument('--dist-backend', default='nccl', type=str, help='distributed backend')  # expect: CUDA004
parser.add_argument('--gpu', default=None, type=int)


def train(loader, model, criterion, optimizer, gpu):
    model.train()
    for images, target in loader:
        if gpu is not None and torch.cuda.is_available():  # expect: CUDA003
            images = images.cuda(gpu, non_blocking=True)  # expect: CUDA002
        if torch.cuda.is_available():  # expect: CUDA003
            target = target.cuda(gpu, non_blocking=True)  # expect: CUDA002
        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main_worker(gpu, ngpus, args):
    dist_backend = args.dist_backend
    dist.init_process_group(backend=dist_backend, init_method='tcp://127.0.0.1:23456',
                            world_size=ngpus, rank=gpu)
    torch.cuda.set_device(gpu)  # expect: CUDA003
    model = nn.Linear(8, 2).cuda(gpu)  # expect: CUDA002
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    criterion = nn.CrossEntropyLoss().cuda(gpu)  # expect: CUDA002
    optimizer = torch.optim.SGD(model.parameters(), 0.1)
    cudnn.benchmark = True  # expect: CUDA005
    device = torch.device("cuda:{}".format(gpu))  # expect: CUDA001
    loader = [(torch.randn(4, 8), torch.zeros(4, dtype=torch.long))]
    train(loader, model, criterion, optimizer, gpu)
    if next(model.parameters()).is_cuda:  # expect: CUDA007
        print("model on", device)


def main():
    args = parser.parse_args()
    ngpus = torch.cuda.device_count()  # expect: CUDA003
    mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))


if __name__ == '__main__':
    main()
