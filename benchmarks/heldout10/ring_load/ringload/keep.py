"""Modules built directly from streamed tensors (embeddings and the tied output head)."""

from __future__ import annotations

import torch

from ringload.stream import stream_shards


def build_embeddings(files: list[str]) -> dict[str, torch.nn.Embedding]:
    tables = {}
    for name, w in stream_shards(files):
        if name.endswith("embed_tokens.weight"):
            tables[name] = torch.nn.Embedding.from_pretrained(w, freeze=True)
    return tables


def build_embeddings_owned(files: list[str]) -> dict[str, torch.nn.Embedding]:
    tables = {}
    for name, w in stream_shards(files):
        if name.endswith("embed_tokens.weight"):
            tables[name] = torch.nn.Embedding.from_pretrained(w.clone(), freeze=True)
    return tables


def tie_head(files: list[str], head: torch.nn.Linear) -> None:
    """The checkpoint stores the head as [hidden, vocab]; the Linear wants [vocab, hidden]."""
    for name, w in stream_shards(files):
        if name == "lm_head.weight_t":
            head.weight.data = w.T


def tie_head_contiguous(files: list[str], head: torch.nn.Linear) -> None:
    for name, w in stream_shards(files):
        if name == "lm_head.weight_t":
            head.weight.data = w.T.contiguous()
