"""Expert stacking and device placement for MoE checkpoints."""

from __future__ import annotations

from collections import defaultdict

import torch
from vllm.model_executor.model_loader.weight_utils import runai_safetensors_weights_iterator

from moestack.fence import CopyFence, upload
from moestack.records import CopyConfig, ExpertShard, TiedWeights, parse_expert


def _stack_key(s: ExpertShard) -> tuple[int, str]:
    return (s.layer, s.proj)


class MoELoader:
    def __init__(self, model: torch.nn.Module, num_experts: int, cfg: CopyConfig) -> None:
        self.model = model
        self.num_experts = num_experts
        self.cfg = cfg
        self.params = dict(model.named_parameters())
        self.tied = TiedWeights()
        self.router_cache: dict[str, torch.Tensor] = {}

    def _flush(self, group: list[ExpertShard]) -> None:
        group.sort(key=lambda s: s.expert)
        layer, proj = _stack_key(group[0])
        stacked = torch.stack([s.weight for s in group])
        self.params[f"layers.{layer}.mlp.experts.{proj}"].data.copy_(stacked)

    def load_experts(self, files: list[str]) -> None:
        pending: dict[tuple[int, str], list[ExpertShard]] = defaultdict(list)
        for name, w in runai_safetensors_weights_iterator(files, False):
            shard = parse_expert(name, w)
            if shard is None:
                self.params[name].data.copy_(w)
                continue
            group = pending[_stack_key(shard)]
            group.append(shard)
            if len(group) == self.num_experts:
                self._flush(pending.pop(_stack_key(shard)))

    def load_experts_owned(self, files: list[str]) -> None:
        pending: dict[tuple[int, str], list[ExpertShard]] = defaultdict(list)
        for name, w in runai_safetensors_weights_iterator(files, False):
            shard = parse_expert(name, w)
            if shard is None:
                self.params[name].data.copy_(w)
                continue
            group = pending[_stack_key(shard)]
            group.append(shard._replace(weight=w.clone()))
            if len(group) == self.num_experts:
                self._flush(pending.pop(_stack_key(shard)))

    def load_routers(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files, False):
            if name.endswith("router.weight"):
                self.router_cache[name] = w.t()
            elif name.endswith("router.bias"):
                self.router_cache[name] = w.t().clone()
            else:
                self.params[name].data.copy_(w)

    def load_tied(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files, False):
            if name == "model.embed_tokens.weight":
                self.tied.embed = w.detach().cpu()
            elif name == "lm_head.weight":
                self.tied.lm_head = w.to("cpu", copy=True)
            else:
                self.params[name].data.copy_(w)

    def load_tied_record(self, files: list[str]) -> TiedWeights:
        tied = TiedWeights()
        for name, w in runai_safetensors_weights_iterator(files, False):
            if name == "model.embed_tokens.weight":
                tied.embed = w
            elif name == "lm_head.weight":
                tied.lm_head = torch.empty_like(w).copy_(w)
        return tied

    def load_placed(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files, False):
            self.params[name].data.copy_(w, non_blocking=self.cfg.overlap)

    def load_fenced(self, files: list[str], side: torch.cuda.Stream) -> None:
        for name, w in runai_safetensors_weights_iterator(files, False):
            with CopyFence(side):
                self.params[name].data.copy_(w, non_blocking=True)

    def load_side_stream(self, files: list[str], side: torch.cuda.Stream) -> None:
        done = torch.cuda.Event()
        for name, w in runai_safetensors_weights_iterator(files, False):
            with torch.cuda.stream(side):
                done.record()
                self.params[name].data.copy_(w, non_blocking=True)
            done.synchronize()

    def load_to_device(self, files: list[str]) -> None:
        device = torch.device(self.cfg.device)
        for name, w in runai_safetensors_weights_iterator(files, False):
            on_dev = w.to(device=device, non_blocking=True)
            torch.cuda.synchronize(device)
            self.params[name].data = on_dev

    def load_every_16(self, files: list[str]) -> None:
        for i, (name, w) in enumerate(runai_safetensors_weights_iterator(files, False)):
            self.params[name].data = upload(w)
            if i % 16 == 15:
                torch.cuda.synchronize()


def find_router(files: list[str], layer: int) -> torch.Tensor | None:
    found = None
    for name, w in runai_safetensors_weights_iterator(files, False):
        if name == f"layers.{layer}.mlp.router.weight":
            found = w
    return found


def find_router_owned(files: list[str], layer: int) -> torch.Tensor | None:
    found = None
    for name, w in runai_safetensors_weights_iterator(files, False):
        if name == f"layers.{layer}.mlp.router.weight":
            found = w.clone()
    return found
