"""Push reference-policy weights from a checkpoint into a rollout engine."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Dict, Protocol, Sequence

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from .buckets import iter_buckets, iter_owned_buckets


class RolloutEngine(Protocol):
    def update_weights(self, names: Sequence[str], tensors: Sequence[torch.Tensor]) -> None: ...


class WeightSyncer:
    def __init__(self, engine: RolloutEngine, pool: ThreadPoolExecutor, cap_bytes: int = 1 << 28) -> None:
        self.engine = engine
        self.pool = pool
        self.cap_bytes = cap_bytes

    def push_reference(self, files: list[str]) -> None:
        for bucket in iter_buckets(runai_safetensors_weights_iterator(files), self.cap_bytes):
            self.engine.update_weights(bucket.names, bucket.tensors)

    def push_reference_async(self, files: list[str]) -> None:
        futs = []
        for bucket in iter_owned_buckets(runai_safetensors_weights_iterator(files), self.cap_bytes):
            futs.append(self.pool.submit(self.engine.update_weights, bucket.names, bucket.tensors))
        wait(futs)

    def snapshot(self, files: list[str]) -> Dict[str, torch.Tensor]:
        return dict(runai_safetensors_weights_iterator(files))

    def snapshot_owned(self, files: list[str]) -> Dict[str, torch.Tensor]:
        return {n: w.clone() for n, w in runai_safetensors_weights_iterator(files)}

    def broadcast_each(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            th = threading.Thread(target=self.engine.update_weights, args=([name], [w]))
            th.start()
            th.join()

    def broadcast_fire(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            threading.Thread(target=self.engine.update_weights, args=([name], [w]), daemon=True).start()

    def alias_into(self, model: torch.nn.Module, files: list[str]) -> None:
        params = dict(model.named_parameters())
        for name, w in runai_safetensors_weights_iterator(files):
            params[name].data = w
