"""LoRA adapters: A and B matrices arrive in any order; an adapter is installed once both are in."""

from __future__ import annotations

import asyncio

import torch
from safetensors.torch import save_file

from itswap.readers import SwapConfig, named_tensors, named_tensors_owned, open_for, open_owned, open_streaming


class AdapterSlot(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weights = torch.nn.ParameterDict()


def _pair(name: str) -> tuple[str, str]:
    base, _, ab = name.rpartition(".lora_")
    return base, ab


def install_pairs(files: list[str], slot: AdapterSlot) -> None:
    pending: dict[str, dict[str, torch.Tensor]] = {}
    with open_streaming(files, device=0) as f:
        for name, t in f.tensors():
            base, ab = _pair(name)
            pending.setdefault(base, {})
            pending[base] |= {ab: t}
            if len(pending[base]) == 2:
                pair = pending.pop(base)
                slot.weights[base.replace(".", "_")] = torch.nn.Parameter(pair["B"] @ pair["A"], requires_grad=False)


def install_pairs_cloned(files: list[str], slot: AdapterSlot) -> None:
    pending: dict[str, dict[str, torch.Tensor]] = {}
    with open_streaming(files, device=0) as f:
        for name, t in f.tensors():
            base, ab = _pair(name)
            pending.setdefault(base, {})
            pending[base] |= {ab: t.clone()}
            if len(pending[base]) == 2:
                pair = pending.pop(base)
                slot.weights[base.replace(".", "_")] = torch.nn.Parameter(pair["B"] @ pair["A"], requires_grad=False)


def install_raw(files: list[str], slot: AdapterSlot) -> None:
    with open_streaming(files, device=0) as f:
        for name, t in f.tensors():
            slot.weights.update({name.replace(".", "_"): torch.nn.Parameter(t, requires_grad=False)})


def install_raw_owned(files: list[str], slot: AdapterSlot) -> None:
    with open_owned(files, 0) as f:
        for name, t in f.tensors():
            slot.weights.update({name.replace(".", "_"): torch.nn.Parameter(t, requires_grad=False)})


def adapter_table(files: list[str]) -> dict[str, torch.Tensor]:
    return dict(named_tensors(files, 0))


def adapter_table_owned(files: list[str]) -> dict[str, torch.Tensor]:
    return dict(named_tensors_owned(files, 0))


def by_rank(files: list[str], cfg: SwapConfig = SwapConfig()) -> list[tuple[str, torch.Tensor]]:
    """Largest-rank adapters first, so the allocator sees the big blocks early."""
    with open_for(cfg, files) as f:
        return sorted(f.tensors(), key=lambda kv: kv[1].shape[0], reverse=True)


def by_rank_owned(files: list[str]) -> list[tuple[str, torch.Tensor]]:
    with open_for(SwapConfig(zero_copy=False), files) as f:
        return sorted(f.tensors(), key=lambda kv: kv[1].shape[0], reverse=True)


async def export_adapters(files: list[str], out_dir: str) -> None:
    """Writes each adapter tensor back out as its own file (for the adapter store)."""
    loop = asyncio.get_running_loop()
    writes = []
    with open_streaming(files, device=0) as f:
        for name, t in f.tensors():
            writes.append(loop.run_in_executor(None, save_file, {name: t}, f"{out_dir}/{name}.safetensors"))
    await asyncio.gather(*writes)


async def export_adapters_serial(files: list[str], out_dir: str) -> None:
    loop = asyncio.get_running_loop()
    with open_streaming(files, device=0) as f:
        for name, t in f.tensors():
            await loop.run_in_executor(None, save_file, {name: t}, f"{out_dir}/{name}.safetensors")
