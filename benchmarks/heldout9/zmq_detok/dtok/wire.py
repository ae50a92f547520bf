"""Fixed-size output frames, encoded into one reused buffer (no allocation per step)."""

import struct
from dataclasses import dataclass

import numpy as np

FRAME_BYTES = 1 << 20  # always sent whole: far above zmq.COPY_THRESHOLD (64 KiB)
HEADER = struct.Struct("<IIII")  # seq, rows, top_k, flags
HEADER_BYTES = HEADER.size


@dataclass
class StepOutput:
    seq: int
    token_ids: np.ndarray  # int32 [rows]
    logprobs: np.ndarray   # float32 [rows, top_k]


class FrameEncoder:
    def __init__(self) -> None:
        self._buf = bytearray(FRAME_BYTES)
        self._view = memoryview(self._buf)

    def encode(self, out: StepOutput) -> memoryview:
        rows, top_k = out.logprobs.shape
        HEADER.pack_into(self._buf, 0, out.seq, rows, top_k, 0)
        ids = np.frombuffer(self._buf, dtype=np.int32, count=rows, offset=HEADER_BYTES)
        ids[:] = out.token_ids
        lp_off = HEADER_BYTES + 4 * rows
        lps = np.frombuffer(self._buf, dtype=np.float32, count=rows * top_k, offset=lp_off)
        lps[:] = out.logprobs.reshape(-1)
        return memoryview(self._buf)
