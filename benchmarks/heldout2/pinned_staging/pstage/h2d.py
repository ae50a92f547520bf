"""Stream a checkpoint straight into GPU parameters."""
from __future__ import annotations

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


def load_to_device(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        params[name].data.copy_(w, non_blocking=True)
    torch.cuda.synchronize()


def load_to_device_synced(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        params[name].data.copy_(w, non_blocking=True)
        torch.cuda.current_stream().synchronize()


def load_moved(model: torch.nn.Module, files: list[str], index: int) -> None:
    device = torch.device("cuda", index)
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        params[name].data = w.to(device, non_blocking=True)
    torch.cuda.synchronize(device)
