from dataclasses import dataclass
from typing import List

import torch

from ssync.d2h import to_host_async


@dataclass
class SampleOutput:
    next_token_ids: List[int]
    finished: List[bool]


class GreedySampler:
    def __init__(self, eos_id: int):
        self.eos_id = eos_id
        self.copy_stream = torch.cuda.Stream()

    def sample(self, logits: torch.Tensor) -> SampleOutput:
        ids = logits.argmax(dim=-1)
        ids_cpu = to_host_async(ids)
        token_ids = ids_cpu.tolist()
        return SampleOutput(token_ids, [t == self.eos_id for t in token_ids])

    def sample_synced(self, logits: torch.Tensor) -> SampleOutput:
        ids = logits.argmax(dim=-1)
        ids_cpu = ids.to("cpu", non_blocking=True)
        done = torch.cuda.Event()
        done.record()
        done.synchronize()
        token_ids = ids_cpu.tolist()
        return SampleOutput(token_ids, [t == self.eos_id for t in token_ids])

    def sample_blocking(self, logits: torch.Tensor) -> SampleOutput:
        ids_cpu = logits.argmax(dim=-1).to("cpu")
        token_ids = ids_cpu.tolist()
        return SampleOutput(token_ids, [t == self.eos_id for t in token_ids])

    def num_finished(self, finished_mask: torch.Tensor) -> int:
        host_mask = finished_mask.to("cpu", non_blocking=True)
        return int(host_mask.sum())

    def any_finished(self, finished_mask: torch.Tensor) -> bool:
        host_mask = finished_mask.to("cpu", non_blocking=True)
        torch.cuda.current_stream().synchronize()
        return bool(host_mask.any())
