"""Swap a module's weights for the streamed ones without touching the optimizer."""
from __future__ import annotations

import torch
from torch import nn
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


def swap_in_place(model: nn.Module, files: list[str]) -> None:
    modules = dict(model.named_modules())
    for name, w in runai_safetensors_weights_iterator(files):
        mod_name, _, attr = name.rpartition(".")
        setattr(modules[mod_name], attr, nn.Parameter(w, requires_grad=False))


def swap_cloned(model: nn.Module, files: list[str]) -> None:
    modules = dict(model.named_modules())
    for name, w in runai_safetensors_weights_iterator(files):
        mod_name, _, attr = name.rpartition(".")
        setattr(modules[mod_name], attr, nn.Parameter(w.clone(), requires_grad=False))


def swap_to_device(model: nn.Module, files: list[str], device: torch.device) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        params[name].data = w.to(device)


def alias_cpu(model: nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        params[name].data = w


def swap_for_serving(model: nn.Module, files: list[str]) -> None:
    swap_to_device(model, files, torch.device("cuda", 0))
