"""What the output path remembers between steps: retransmits, last frames, stats."""

import zlib
from collections import OrderedDict
from typing import Iterable

import numpy as np
import torch

from .wire import HEADER_BYTES, FrameEncoder, StepOutput

RESEND_DEPTH = 8


class OutputHistory:
    def __init__(self) -> None:
        self.enc = FrameEncoder()
        self.last_frame: memoryview | bytes | None = None
        self.resend: OrderedDict[int, object] = OrderedDict()
        self.pending_acks: list = []
        self.crcs: list[int] = []

    def record(self, out: StepOutput) -> memoryview:
        frame = self.enc.encode(out)
        self.last_frame = frame
        return frame

    def record_copy(self, out: StepOutput) -> memoryview:
        frame = self.enc.encode(out)
        self.last_frame = bytes(frame)
        return frame

    def remember(self, out: StepOutput) -> None:
        frame = self.enc.encode(out)
        self.resend[out.seq] = frame
        while len(self.resend) > RESEND_DEPTH:
            self.resend.popitem(last=False)

    def remember_owned(self, out: StepOutput) -> None:
        frame = self.enc.encode(out)
        self.resend[out.seq] = frame.tobytes()
        while len(self.resend) > RESEND_DEPTH:
            self.resend.popitem(last=False)

    def await_ack(self, out: StepOutput) -> None:
        frame = self.enc.encode(out)
        self.pending_acks.append((out.seq, frame))

    def checksum(self, out: StepOutput) -> None:
        frame = self.enc.encode(out)
        self.crcs.append(zlib.crc32(frame))


def collect_logprobs(outputs: Iterable[StepOutput], top_k: int) -> list[np.ndarray]:
    enc = FrameEncoder()
    rows_seen = []
    for out in outputs:
        frame = enc.encode(out)
        rows = len(out.token_ids)
        rows_seen.append(np.frombuffer(frame, np.float32, count=rows * top_k, offset=HEADER_BYTES + 4 * rows))
    return rows_seen


def collect_logprobs_owned(outputs: Iterable[StepOutput], top_k: int) -> list[np.ndarray]:
    enc = FrameEncoder()
    rows_seen = []
    for out in outputs:
        frame = enc.encode(out)
        rows = len(out.token_ids)
        rows_seen.append(np.array(np.frombuffer(frame, np.float32, count=rows * top_k, offset=HEADER_BYTES + 4 * rows)))
    return rows_seen


def index_token_ids(outputs: Iterable[StepOutput]) -> dict[int, torch.Tensor]:
    enc = FrameEncoder()
    by_seq = {}
    for out in outputs:
        frame = enc.encode(out)
        by_seq[out.seq] = torch.frombuffer(frame, dtype=torch.int32, count=len(out.token_ids), offset=HEADER_BYTES)
    return by_seq


def index_token_ids_owned(outputs: Iterable[StepOutput]) -> dict[int, torch.Tensor]:
    enc = FrameEncoder()
    by_seq = {}
    for out in outputs:
        frame = enc.encode(out)
        by_seq[out.seq] = torch.frombuffer(frame, dtype=torch.int32, count=len(out.token_ids), offset=HEADER_BYTES).clone()
    return by_seq
