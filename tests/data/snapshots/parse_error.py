import torch

def train(model:
    pass
