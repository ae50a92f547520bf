"""Loader variants: fusing, tying, overlapping, quantising."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import torch

from ststage.base import CheckpointLoader
from ststage.source import stream_checkpoint

QKV = ("q_proj", "k_proj", "v_proj")


def split_key(name: str) -> tuple[str, str]:
    prefix, _, leaf = name.rpartition(".")
    proj = prefix.rsplit(".", 1)[-1]
    return prefix.rsplit(".", 1)[0], proj


class FusingLoader(CheckpointLoader):
    """Keeps q/k/v until the three of a layer have arrived, then fuses them."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__(model)
        self.parts: dict[str, dict[str, torch.Tensor]] = {}

    def on_tensor(self, name: str, tensor: torch.Tensor) -> None:
        layer, proj = split_key(name)
        if proj not in QKV:
            return super().on_tensor(name, tensor)
        self.parts.setdefault(layer, {})[proj] = tensor
        if len(self.parts[layer]) == 3:
            group = self.parts.pop(layer)
            self.params[layer + ".qkv_proj.weight"].data.copy_(torch.cat([group[p] for p in QKV]))


class FusingCloneLoader(FusingLoader):
    def on_tensor(self, name: str, tensor: torch.Tensor) -> None:
        layer, proj = split_key(name)
        if proj not in QKV:
            return CheckpointLoader.on_tensor(self, name, tensor)
        self.parts.setdefault(layer, {})[proj] = tensor.clone()
        if len(self.parts[layer]) == 3:
            group = self.parts.pop(layer)
            self.params[layer + ".qkv_proj.weight"].data.copy_(torch.cat([group[p] for p in QKV]))


class TiedLoader(CheckpointLoader):
    """Ties lm_head to the embedding as the checkpoint's embedding streams by."""

    def on_tensor(self, name: str, tensor: torch.Tensor) -> None:
        if name == "model.embed_tokens.weight":
            self.model.lm_head.weight = torch.nn.Parameter(tensor, requires_grad=False)
            return
        super().on_tensor(name, tensor)


class TiedCopyLoader(CheckpointLoader):
    def on_tensor(self, name: str, tensor: torch.Tensor) -> None:
        if name == "model.embed_tokens.weight":
            self.model.lm_head.weight = torch.nn.Parameter(tensor.detach().clone(), requires_grad=False)
            return
        super().on_tensor(name, tensor)


class OverlapLoader(CheckpointLoader):
    """Copies to the device without blocking; one synchronisation at the end."""

    def on_tensor(self, name: str, tensor: torch.Tensor) -> None:
        self.params[name].data.copy_(tensor, non_blocking=True)

    def finish(self) -> None:
        torch.cuda.synchronize()


class EventLoader(CheckpointLoader):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__(model)
        self.copied = torch.cuda.Event()

    def on_tensor(self, name: str, tensor: torch.Tensor) -> None:
        self.params[name].data.copy_(tensor, non_blocking=True)
        self.copied.record()
        self.copied.synchronize()


class PinnedStageLoader(CheckpointLoader):
    """Collects device copies of each tensor; pins first "to make the copy async"."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__(model)
        self.on_device: dict[str, torch.Tensor] = {}

    def on_tensor(self, name: str, tensor: torch.Tensor) -> None:
        self.on_device[name] = tensor.pin_memory().to(self.device, non_blocking=True)

    def finish(self) -> None:
        torch.cuda.synchronize()
        for name, t in self.on_device.items():
            self.params[name].data = t


class ConfiguredStageLoader(PinnedStageLoader):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__(model)
        self.overlap = False  # only owned checkpoints may overlap; streamed ones never do

    def on_tensor(self, name: str, tensor: torch.Tensor) -> None:
        self.on_device[name] = tensor.to(self.device, non_blocking=self.overlap)


class QuantLoader(CheckpointLoader):
    """Quantises each weight on a worker pool, overlapping the stream."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__(model)
        self.pool = ThreadPoolExecutor(max_workers=4)

    def quantize_into(self, name: str, tensor: torch.Tensor) -> None:
        scale = tensor.abs().amax().clamp(min=1e-8) / 127.0
        self.params[name].data.copy_((tensor / scale).round().clamp(-127, 127))

    def load(self, paths: list[str]) -> None:
        futures: list[Future] = []
        for name, tensor in stream_checkpoint(paths):
            futures.append(self.pool.submit(self.quantize_into, name, tensor))
        for f in futures:
            f.result()


class QuantWaitLoader(QuantLoader):
    def load(self, paths: list[str]) -> None:
        for name, tensor in stream_checkpoint(paths):
            self.pool.submit(self.quantize_into, name, tensor).result()
