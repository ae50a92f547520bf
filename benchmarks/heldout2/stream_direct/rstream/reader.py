"""Drive the RunAI streamer and hand every tensor to a callback."""
from __future__ import annotations

from typing import Callable

import torch
from runai_model_streamer import SafetensorsStreamer

OnTensor = Callable[[str, torch.Tensor], None]


def stream_into(files: list[str], on_tensor: OnTensor, device: str = "cpu") -> int:
    count = 0
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(files, device=device)
        for name, tensor in streamer.get_tensors():
            on_tensor(name, tensor)
            count += 1
    return count
