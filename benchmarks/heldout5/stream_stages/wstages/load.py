"""Loaders assembled from the stages."""

from __future__ import annotations

import collections
import concurrent.futures as cf
import itertools
import threading

import torch

from wstages.stages import open_stream, renamed, skip_rotary, to_device, to_device_fenced, to_device_pinned

HF_TO_LOCAL = {"model.": "", "self_attn.": "attn."}


def _copy_pair(params: dict[str, torch.nn.Parameter], pair: tuple[str, torch.Tensor]) -> None:
    name, w = pair
    params[name].data.copy_(w)


def load_grouped(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for group in itertools.batched(renamed(open_stream(files), HF_TO_LOCAL), 8):
        for name, w in group:
            params[name].data.copy_(w)


def load_grouped_owned(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    stream = renamed(open_stream(files), HF_TO_LOCAL)
    for group in itertools.batched(((n, w.clone()) for n, w in stream), 8):
        for name, w in group:
            params[name].data.copy_(w)


def load_lookup(model: torch.nn.Module, files: list[str]) -> dict[str, torch.Tensor]:
    by_name = {n: w for n, w in skip_rotary(open_stream(files))}
    return by_name


def load_lookup_owned(model: torch.nn.Module, files: list[str]) -> dict[str, torch.Tensor]:
    by_name = {n: w.clone() for n, w in skip_rotary(open_stream(files))}
    return by_name


def load_fused_mlp(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    held: tuple[str, torch.Tensor] | None = None
    for name, w in renamed(open_stream(files), HF_TO_LOCAL):
        if name.endswith("gate_proj.weight"):
            held = (name, w)
            continue
        if name.endswith("up_proj.weight") and held is not None:
            fused = torch.cat([held[1], w], dim=0)
            params[name.replace("up_proj", "gate_up_proj")].data.copy_(fused)
            held = None
            continue
        params[name].data.copy_(w)


def load_fused_mlp_owned(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    held: tuple[str, torch.Tensor] | None = None
    for name, w in renamed(open_stream(files), HF_TO_LOCAL):
        if name.endswith("gate_proj.weight"):
            held = (name, w.clone())
            continue
        if name.endswith("up_proj.weight") and held is not None:
            fused = torch.cat([held[1], w], dim=0)
            params[name.replace("up_proj", "gate_up_proj")].data.copy_(fused)
            held = None
            continue
        params[name].data.copy_(w)


def drift_report(files: list[str]) -> list[float]:
    recent: collections.deque[torch.Tensor] = collections.deque(maxlen=2)
    drift = []
    for _, w in open_stream(files):
        if len(recent) == 2:
            drift.append(float((recent[0].float().mean() - recent[1].float().mean()).abs()))
        recent.append(w)
    return drift


def drift_report_owned(files: list[str]) -> list[float]:
    recent: collections.deque[torch.Tensor] = collections.deque(maxlen=2)
    drift = []
    for _, w in open_stream(files):
        if len(recent) == 2:
            drift.append(float((recent[0].float().mean() - recent[1].float().mean()).abs()))
        recent.append(w.clone())
    return drift


def row_shards(files: list[str], rank: int, world: int) -> dict[str, torch.Tensor]:
    local = {}
    for name, w in open_stream(files):
        local[name] = w.chunk(world, dim=0)[rank].contiguous()
    return local


def row_shards_owned(files: list[str], rank: int, world: int) -> dict[str, torch.Tensor]:
    local = {}
    for name, w in open_stream(files):
        local[name] = w.chunk(world, dim=0)[rank].clone()
    return local


def find_embedding(files: list[str]) -> torch.Tensor | None:
    found = None
    for name, w in open_stream(files):
        if name.endswith("embed_tokens.weight"):
            found = w
    return found


def find_embedding_owned(files: list[str]) -> torch.Tensor | None:
    found = None
    for name, w in open_stream(files):
        if name.endswith("embed_tokens.weight"):
            found = w.clone()
    return found


def load_on_device(model: torch.nn.Module, files: list[str], device: torch.device) -> None:
    params = dict(model.named_parameters())
    for name, dev in to_device(renamed(open_stream(files), HF_TO_LOCAL), device):
        params[name].data = dev


def load_on_device_fenced(model: torch.nn.Module, files: list[str], device: torch.device) -> None:
    params = dict(model.named_parameters())
    for name, dev in to_device_fenced(renamed(open_stream(files), HF_TO_LOCAL), device):
        params[name].data = dev


def load_on_device_pinned(model: torch.nn.Module, files: list[str], device: torch.device) -> None:
    params = dict(model.named_parameters())
    for name, dev in to_device_pinned(open_stream(files), device):
        params[name].data = dev


def load_side_stream(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    side = torch.cuda.Stream()
    for name, w in open_stream(files):
        with torch.cuda.stream(side):
            params[name].data.copy_(w, non_blocking=True)
        torch.cuda.current_stream().wait_stream(side)


def load_side_stream_fenced(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    side = torch.cuda.Stream()
    for name, w in open_stream(files):
        with torch.cuda.stream(side):
            params[name].data.copy_(w, non_blocking=True)
            landed = side.record_event()
        landed.synchronize()


def load_per_layer_sync(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in open_stream(files):
        params[name].data.copy_(w.cuda(non_blocking=True))
        if name.endswith("post_attention_layernorm.weight"):
            torch.cuda.synchronize()


def load_mapped(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    with cf.ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda pair: _copy_pair(params, pair), open_stream(files)))


def load_mapped_owned(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    with cf.ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda pair: _copy_pair(params, pair), ((n, w.clone()) for n, w in open_stream(files))))


def load_threaded(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    workers = []
    for name, w in open_stream(files):
        t = threading.Thread(target=params[name].data.copy_, args=(w,), daemon=True)
        t.start()
        workers.append(t)
    for t in workers:
        t.join()


def load_threaded_joined(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in open_stream(files):
        t = threading.Thread(target=params[name].data.copy_, args=(w,), daemon=True)
        t.start()
        t.join()
