"""Host-side expert caches: which experts stay in CPU memory between routing steps."""

from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import Callable, ClassVar

import torch

from moeoff.stream import expert_key, iter_expert_tensors

_ROUTER_BIAS: torch.Tensor | None = None
_ROUTER_BIAS_OWNED: torch.Tensor | None = None


class ExpertBank:
    """Experts shared by every engine of the process (one bank per model)."""

    shared: ClassVar[dict[str, torch.Tensor]] = {}
    shared_owned: ClassVar[dict[str, torch.Tensor]] = {}

    @classmethod
    def fill(cls, files: list[str]) -> None:
        for name, w in iter_expert_tensors(files):
            if ".experts." in name:
                cls.shared[name] = w

    @classmethod
    def fill_owned(cls, files: list[str]) -> None:
        for name, w in iter_expert_tensors(files):
            if ".experts." in name:
                cls.shared_owned[name] = w.clone()


def load_router_bias(files: list[str]) -> None:
    global _ROUTER_BIAS
    for name, w in iter_expert_tensors(files):
        if name.endswith("gate.e_score_correction_bias"):
            _ROUTER_BIAS = w


def load_router_bias_owned(files: list[str]) -> None:
    global _ROUTER_BIAS_OWNED
    for name, w in iter_expert_tensors(files):
        if name.endswith("gate.e_score_correction_bias"):
            _ROUTER_BIAS_OWNED = w.clone()


@dataclasses.dataclass(frozen=True)
class ExpertSpec:
    layer: int
    expert: int
    proj: str
    weight: torch.Tensor | None = None


def collect_specs(files: list[str], template: ExpertSpec) -> list[ExpertSpec]:
    specs: list[ExpertSpec] = []
    for name, w in iter_expert_tensors(files):
        layer, expert, proj = expert_key(name)
        specs.append(dataclasses.replace(template, layer=layer, expert=expert, proj=proj, weight=w))
    return specs


def collect_specs_owned(files: list[str], template: ExpertSpec) -> list[ExpertSpec]:
    specs: list[ExpertSpec] = []
    for name, w in iter_expert_tensors(files):
        layer, expert, proj = expert_key(name)
        specs.append(dataclasses.replace(template, layer=layer, expert=expert, proj=proj, weight=w.clone()))
    return specs


class ColumnMajorExperts:
    """Down-projections kept transposed for the CPU grouped GEMM."""

    def __init__(self) -> None:
        self.down_t: dict[str, torch.Tensor] = {}

    def load(self, files: list[str]) -> None:
        for name, w in iter_expert_tensors(files):
            if name.endswith("w2.weight"):
                self.down_t[name] = w.transpose(0, 1)

    def load_packed(self, files: list[str]) -> None:
        for name, w in iter_expert_tensors(files):
            if name.endswith("w2.weight"):
                self.down_t[name] = w.transpose(0, 1).contiguous()


def layer_of(item: tuple[str, torch.Tensor]) -> int:
    return expert_key(item[0])[0]


def fuse_layers(files: list[str], fuse: Callable[[int, list[torch.Tensor]], None]) -> None:
    for layer, group in itertools.groupby(iter_expert_tensors(files), key=layer_of):
        experts = [w for _, w in group]
        fuse(layer, experts)


def fuse_layers_owned(files: list[str], fuse: Callable[[int, list[torch.Tensor]], None]) -> None:
    for layer, group in itertools.groupby(iter_expert_tensors(files), key=layer_of):
        experts = [w.clone() for _, w in group]
        fuse(layer, experts)


def scale_expert(weight: torch.Tensor, scale: float) -> torch.Tensor:
    return weight.float() * scale


class LazyDequant:
    """Dequantisation thunks run on first use of an expert."""

    def __init__(self) -> None:
        self.thunks: dict[str, Callable[[float], torch.Tensor]] = {}

    def register(self, files: list[str]) -> None:
        for name, w in iter_expert_tensors(files):
            self.thunks[name] = functools.partial(scale_expert, w)

    def register_owned(self, files: list[str]) -> None:
        for name, w in iter_expert_tensors(files):
            self.thunks[name] = functools.partial(scale_expert, w.clone())

    def materialise(self, name: str, scale: float) -> torch.Tensor:
        return self.thunks.pop(name)(scale)
