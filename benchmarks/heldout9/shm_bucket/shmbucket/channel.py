"""The engine's end of the bucket channel."""

from dataclasses import dataclass
from multiprocessing.shared_memory import SharedMemory

import torch
import zmq

DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32, "f16": torch.float16}


@dataclass(frozen=True)
class Entry:
    name: str
    dtype: str
    shape: tuple[int, ...]
    offset: int
    nbytes: int


def view_of(window: torch.Tensor, e: Entry) -> torch.Tensor:
    return window[e.offset : e.offset + e.nbytes].view(DTYPES[e.dtype]).view(e.shape)


class BucketChannel:
    def __init__(self, shm_name: str, endpoint: str) -> None:
        self.block = SharedMemory(name=shm_name)
        self.sock = zmq.Context.instance().socket(zmq.PAIR)
        self.sock.connect(endpoint)

    def window(self) -> torch.Tensor:
        return torch.frombuffer(self.block.buf, dtype=torch.uint8)
