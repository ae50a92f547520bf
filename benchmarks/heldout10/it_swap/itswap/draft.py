"""Swaps the speculative-decoding draft model's weights in place."""

from __future__ import annotations

import threading

import torch

from itswap.readers import open_streaming


def swap_draft(files: list[str], draft: torch.nn.Module) -> None:
    params = dict(draft.named_parameters())
    with open_streaming(files, device=0) as f:
        for name, t in f.tensors():
            torch.utils.swap_tensors(params[name], torch.nn.Parameter(t, requires_grad=False))


def swap_draft_copied(files: list[str], draft: torch.nn.Module) -> None:
    params = dict(draft.named_parameters())
    with open_streaming(files, device=0) as f, torch.no_grad():
        for name, t in f.tensors():
            params[name].copy_(t)


def _record_norm(norms: dict[str, float], name: str, t: torch.Tensor) -> None:
    norms[name] = float(torch.linalg.vector_norm(t.float()))


def draft_norms(files: list[str]) -> dict[str, float]:
    """Per-tensor norms, compared with the trainer's to validate the swap."""
    norms: dict[str, float] = {}
    with open_streaming(files, device=0) as f:
        for name, t in f.tensors():
            th = threading.Thread(target=_record_norm, args=(norms, name, t), daemon=True)
            th.start()
            th.join(timeout=0.05)
    return norms


def draft_norms_joined(files: list[str]) -> dict[str, float]:
    norms: dict[str, float] = {}
    with open_streaming(files, device=0) as f:
        for name, t in f.tensors():
            th = threading.Thread(target=_record_norm, args=(norms, name, t), daemon=True)
            th.start()
            th.join()
    return norms
