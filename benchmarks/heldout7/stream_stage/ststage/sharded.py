"""Tensor-parallel loading through weight_loader attributes set with functools.partial."""

from __future__ import annotations

import functools

import torch

from ststage.source import stream_checkpoint


def shard_loader(param: torch.nn.Parameter, loaded: torch.Tensor, *, dim: int, rank: int, world: int) -> None:
    size = param.shape[dim]
    param.data.copy_(loaded.narrow(dim, rank * size, size), non_blocking=True)


def shard_loader_synced(param: torch.nn.Parameter, loaded: torch.Tensor, *, dim: int, rank: int, world: int) -> None:
    size = param.shape[dim]
    param.data.copy_(loaded.narrow(dim, rank * size, size), non_blocking=True)
    torch.cuda.current_stream().synchronize()


def install_loaders(model: torch.nn.Module, rank: int, world: int, overlap: bool) -> None:
    loader = shard_loader if overlap else shard_loader_synced
    for name, param in model.named_parameters():
        dim = 0 if name.endswith(("q_proj.weight", "gate_proj.weight")) else 1
        param.weight_loader = functools.partial(loader, dim=dim, rank=rank, world=world)


def load_sharded(model: torch.nn.Module, paths: list[str], rank: int, world: int, overlap: bool) -> None:
    install_loaders(model, rank, world, overlap)
    params = dict(model.named_parameters())
    for name, tensor in stream_checkpoint(paths):
        param = params[name]
        param.weight_loader(param, tensor)
