"""The learner's fp32 master weights and optimizer state, restored from streamed checkpoints."""

import torch

from .reader import streamed


class MasterState:
    def __init__(self) -> None:
        self.master: dict[str, torch.Tensor] = {}
        self.exp_avg: dict[str, torch.Tensor] = {}

    def restore_master(self, bf16_files: list[str]) -> None:
        with streamed(bf16_files) as tensors:
            for name, w in tensors:
                assert w.dtype == torch.bfloat16, name
                self.master[name] = w.float()

    def restore_moments(self, fp32_files: list[str]) -> None:
        with streamed(fp32_files) as tensors:
            for name, w in tensors:
                assert w.dtype == torch.float32, name
                self.exp_avg[name] = w.float()


def attach_buffers(root: torch.nn.Module, files: list[str]) -> None:
    with streamed(files) as tensors:
        for name, w in tensors:
            owner, _, leaf = name.rpartition(".")
            root.get_submodule(owner).register_parameter(leaf, torch.nn.Parameter(w, requires_grad=False))


def attach_buffers_owned(root: torch.nn.Module, files: list[str]) -> None:
    with streamed(files) as tensors:
        for name, w in tensors:
            owner, _, leaf = name.rpartition(".")
            root.get_submodule(owner).register_parameter(leaf, torch.nn.Parameter(w.clone(), requires_grad=False))


def flat_rows(files: list[str], names: list[str]) -> list[torch.Tensor | None]:
    index = {n: i for i, n in enumerate(names)}
    rows: list[torch.Tensor | None] = [None] * len(names)
    with streamed(files) as tensors:
        for name, w in tensors:
            rows[index[name]] = w.reshape(-1)
    return rows


def flat_rows_packed(files: list[str], names: list[str], width: int) -> torch.Tensor:
    index = {n: i for i, n in enumerate(names)}
    packed = torch.empty(len(names), width, dtype=torch.bfloat16)
    with streamed(files) as tensors:
        for name, w in tensors:
            packed[index[name]] = w.reshape(-1)
    return packed
