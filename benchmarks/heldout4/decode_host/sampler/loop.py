"""Drive the host side of a decode loop."""

from __future__ import annotations

import torch

from sampler.step import HostSide


def decode(logits_fn, steps: int, vocab: int, overlap: bool = True) -> list[list[int]]:
    host = HostSide(overlap=overlap, vocab=vocab)
    side = torch.cuda.Stream()
    out = []
    for i in range(steps):
        logits = logits_fn(i)
        next_ids = torch.argmax(logits, dim=-1)
        finished = next_ids == 0
        if i % 4 == 0:
            out.append(host.ids_unsynced(next_ids))
        elif i % 4 == 1:
            out.append(host.ids_event(next_ids))
        elif i % 4 == 2:
            out.append(host.ids_device_wait(next_ids, side))
        else:
            out.append(host.ids_polled(next_ids))
        out.append(host.ids_blocking_helper(next_ids))
        out.append(host.ids_flagged(next_ids))
        out.append(host.emit(next_ids, checked=i % 2 == 0))
        host.top_logprobs(torch.log_softmax(logits, -1), k=5)
        host.top_logprobs_synced(torch.log_softmax(logits, -1), k=5)
        host.detokenize_later(next_ids)
        host.detokenize_later_synced(next_ids)
        if host.finished_mask(finished):
            break
    return out
