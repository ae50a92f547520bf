"""Device loaders: overlap host-to-device copies with streaming."""

from __future__ import annotations

import logging

import numpy as np
import torch

from h2dload.source import stream_shard
from h2dload.streams import join_device_only, settle

log = logging.getLogger(__name__)


class DeviceLoader:
    def __init__(self, model: torch.nn.Module, device: torch.device) -> None:
        self.model = model
        self.device = device
        self.params = dict(model.named_parameters())
        self.copy_stream = torch.cuda.Stream(device)
        self.host_norms: dict[str, np.ndarray] = {}

    def load_replace(self, shard: str) -> None:
        for name, w in stream_shard(shard):
            self.params[name].data = w.to(device=self.device, non_blocking=True, copy=True)

    def load_replace_synced(self, shard: str) -> None:
        for name, w in stream_shard(shard):
            self.params[name].data = w.to(device=self.device, non_blocking=True, copy=True)
            torch.cuda.current_stream(self.device).synchronize()

    def load_flat(self, shard: str) -> None:
        for name, w in stream_shard(shard):
            self.params[name].data.view(-1).copy_(w.flatten(), non_blocking=True)
            done = torch.cuda.Event()
            done.record()
            if not done.query():
                log.debug("copy of %s queued", name)

    def load_flat_polled(self, shard: str) -> None:
        for name, w in stream_shard(shard):
            self.params[name].data.view(-1).copy_(w.flatten(), non_blocking=True)
            done = torch.cuda.Event()
            done.record()
            while not done.query():
                pass

    def load_positional(self, shard: str) -> None:
        for name, w in stream_shard(shard):
            self.params[name].data = w.cuda(self.device, True)

    def load_positional_blocking(self, shard: str) -> None:
        for name, w in stream_shard(shard):
            self.params[name].data = w.cuda(self.device, False)

    def load_on_side_stream(self, shard: str) -> None:
        for name, w in stream_shard(shard):
            with torch.cuda.stream(self.copy_stream):
                self.params[name].data.copy_(w, non_blocking=True)
            join_device_only(self.copy_stream)

    def load_on_side_stream_settled(self, shard: str) -> None:
        for name, w in stream_shard(shard):
            with torch.cuda.stream(self.copy_stream):
                self.params[name].data.copy_(w, non_blocking=True)
            settle(self.copy_stream)

    def load_shards_transposed(self, shards: list[str]) -> None:
        for shard in shards:
            for name, w in stream_shard(shard):
                self.params[name].data.copy_(w.t(), non_blocking=True)
            torch.cuda.synchronize(self.device)

    def load_shards_transposed_each(self, shards: list[str]) -> None:
        for shard in shards:
            for name, w in stream_shard(shard):
                self.params[name].data.copy_(w.t(), non_blocking=True)
                torch.cuda.synchronize(self.device)

    def keep_norms(self, shard: str) -> None:
        for name, w in stream_shard(shard):
            if name.endswith("norm.weight"):
                self.host_norms[name] = w.numpy()
            self.params[name].data.copy_(w)

    def keep_norms_copied(self, shard: str) -> None:
        for name, w in stream_shard(shard):
            if name.endswith("norm.weight"):
                self.host_norms[name] = w.numpy().copy()
            self.params[name].data.copy_(w)

    def load_tied(self, shard: str) -> None:
        pending_embed = None
        for name, w in stream_shard(shard):
            if name == "model.embed_tokens.weight":
                pending_embed = w
            elif name == "lm_head.weight" and pending_embed is not None:
                self.params[name].data.copy_(torch.cat([pending_embed, w], dim=0)[: w.shape[0]])
            else:
                self.params[name].data.copy_(w)

    def load_tied_cloned(self, shard: str) -> None:
        pending_embed = None
        for name, w in stream_shard(shard):
            if name == "model.embed_tokens.weight":
                pending_embed = w.clone()
            elif name == "lm_head.weight" and pending_embed is not None:
                self.params[name].data.copy_(torch.cat([pending_embed, w], dim=0)[: w.shape[0]])
            else:
                self.params[name].data.copy_(w)
