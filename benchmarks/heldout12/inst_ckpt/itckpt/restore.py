"""Restores parameters, caches and expert tables from checkpoints."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict

import torch

from itckpt.readers import ReaderFactory, ReadOptions, open_fast, open_owned

log = logging.getLogger(__name__)


class Restorer:
    def __init__(self, model: torch.nn.Module, opts: ReadOptions | None = None) -> None:
        self.model = model
        self.opts = opts or ReadOptions()
        self.recent: OrderedDict[str, torch.Tensor] = OrderedDict()
        self.experts = torch.nn.ParameterList()

    def warm_cache(self, files: list[str], limit: int = 8) -> None:
        with open_fast(files, self.opts) as f:
            for name, tensor in f.tensors():
                self.recent[name] = tensor
                self.recent.move_to_end(name)
                if len(self.recent) > limit:
                    self.recent.popitem(last=False)

    def warm_cache_owned(self, files: list[str], limit: int = 8) -> None:
        with open_owned(files, self.opts) as f:
            for name, tensor in f.tensors():
                self.recent[name] = tensor
                self.recent.move_to_end(name)
                if len(self.recent) > limit:
                    self.recent.popitem(last=False)

    def load_experts(self, files: list[str]) -> None:
        with ReaderFactory().open(files) as f:
            for name, tensor in f.tensors():
                if ".experts." in name:
                    self.experts.append(torch.nn.Parameter(tensor, requires_grad=False))

    def load_experts_copied(self, files: list[str]) -> None:
        with ReaderFactory().open(files) as f:
            for name, tensor in f.tensors():
                if ".experts." in name:
                    self.experts.append(torch.nn.Parameter(tensor.clone(), requires_grad=False))

    def first_of_each_layer(self, files: list[str]) -> dict[str, torch.Tensor]:
        firsts: dict[str, torch.Tensor] = {}
        with open_fast(files, self.opts) as f:
            for name, tensor in f.tensors():
                firsts.setdefault(name.split(".")[2], tensor)
        return firsts

    def first_of_each_layer_owned(self, files: list[str]) -> dict[str, torch.Tensor]:
        firsts: dict[str, torch.Tensor] = {}
        with open_owned(files, self.opts) as f:
            for name, tensor in f.tensors():
                firsts.setdefault(name.split(".")[2], tensor)
        return firsts

    def materialise(self, files: list[str]) -> list[tuple[str, torch.Tensor]]:
        with open_fast(files, self.opts) as f:
            pairs = [*map(tuple, f.tensors())]
        return pairs

    def materialise_owned(self, files: list[str]) -> list[tuple[str, torch.Tensor]]:
        with open_owned(files, self.opts) as f:
            pairs = [*map(tuple, f.tensors())]
        return pairs

    async def publish(self, files: list[str], out: asyncio.Queue) -> None:
        with open_fast(files, self.opts) as f:
            for name, tensor in f.tensors():
                out.put_nowait((name, tensor))
        await out.join()

    async def publish_owned(self, files: list[str], out: asyncio.Queue) -> None:
        with open_owned(files, self.opts) as f:
            for name, tensor in f.tensors():
                out.put_nowait((name, tensor))
        await out.join()
        log.info("published checkpoint tensors")
