"""Per-request uploader kept by the inference server: one pinned buffer per uploader."""
from __future__ import annotations

import torch


class InputUploader:
    def __init__(self, max_tokens: int, device: str = "cuda") -> None:
        self.host_ids = torch.empty(max_tokens, dtype=torch.int64, pin_memory=True)
        self.dev_ids = torch.empty(max_tokens, dtype=torch.int64, device=device)

    def upload(self, token_ids: list[int]) -> torch.Tensor:
        n = len(token_ids)
        self.host_ids[:n].copy_(torch.tensor(token_ids, dtype=torch.int64))
        self.dev_ids[:n].copy_(self.host_ids[:n], non_blocking=True)
        return self.dev_ids[:n]


class FencedUploader:
    def __init__(self, max_tokens: int, device: str = "cuda") -> None:
        self.host_ids = torch.empty(max_tokens, dtype=torch.int64, pin_memory=True)
        self.dev_ids = torch.empty(max_tokens, dtype=torch.int64, device=device)
        self.uploaded = torch.cuda.Event()

    def upload(self, token_ids: list[int]) -> torch.Tensor:
        n = len(token_ids)
        self.uploaded.synchronize()
        self.host_ids[:n].copy_(torch.tensor(token_ids, dtype=torch.int64))
        self.dev_ids[:n].copy_(self.host_ids[:n], non_blocking=True)
        self.uploaded.record()
        return self.dev_ids[:n]


def upload_microbatches(uploader: InputUploader, first: list[int], second: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    return uploader.upload(first), uploader.upload(second)


def upload_microbatches_fenced(uploader: FencedUploader, first: list[int], second: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    return uploader.upload(first), uploader.upload(second)
