import torch

HOST = torch.device("cpu")
