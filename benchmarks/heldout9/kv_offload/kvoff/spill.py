"""Spilling KV blocks from the device to host memory (and on to disk)."""

import hashlib
from concurrent.futures import Future, ThreadPoolExecutor

import torch

CPU = torch.device("cpu")


def write_block(path: str, host: torch.Tensor) -> None:
    with open(path, "wb") as fh:
        fh.write(host.numpy().tobytes())


def write_block_synced(path: str, host: torch.Tensor) -> None:
    torch.cuda.synchronize()
    with open(path, "wb") as fh:
        fh.write(host.numpy().tobytes())


class Spiller:
    def __init__(self, block_shape: tuple[int, ...], pool: ThreadPoolExecutor) -> None:
        self.spill = torch.empty(block_shape, dtype=torch.float16, pin_memory=True)
        self.pool = pool

    def spill_to_file(self, gpu_block: torch.Tensor, path: str) -> None:
        self.spill.copy_(gpu_block, non_blocking=True)
        torch.save(self.spill, path)

    def spill_to_file_fenced(self, gpu_block: torch.Tensor, path: str) -> None:
        self.spill.copy_(gpu_block, non_blocking=True)
        landed = torch.cuda.Event()
        landed.record()
        landed.synchronize()
        torch.save(self.spill, path)

    def spill_async(self, gpu_block: torch.Tensor, path: str) -> Future:
        host = gpu_block.to(CPU, non_blocking=True)
        return self.pool.submit(write_block, path, host)

    def spill_async_synced(self, gpu_block: torch.Tensor, path: str) -> Future:
        host = gpu_block.to(CPU, non_blocking=True)
        return self.pool.submit(write_block_synced, path, host)


def block_digest(gpu_block: torch.Tensor) -> str:
    host = gpu_block.to(CPU, non_blocking=True)
    return hashlib.sha1(host.numpy().tobytes()).hexdigest()


def block_digest_polled(gpu_block: torch.Tensor) -> str:
    host = gpu_block.to(CPU, non_blocking=True)
    ready = torch.cuda.Event()
    ready.record()
    while not ready.query():
        pass
    return hashlib.sha1(host.numpy().tobytes()).hexdigest()
