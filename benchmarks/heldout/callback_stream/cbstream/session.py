import contextlib
from typing import Callable, Iterator, List, Tuple

import torch
from runai_model_streamer import SafetensorsStreamer

OnTensor = Callable[[str, torch.Tensor], None]


@contextlib.contextmanager
def streaming_session(paths: List[str]) -> Iterator[Iterator[Tuple[str, torch.Tensor]]]:
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(paths)
        yield streamer.get_tensors()


def for_each_tensor(paths: List[str], callbacks: List[OnTensor]) -> int:
    count = 0
    with streaming_session(paths) as tensors:
        for name, tensor in tensors:
            for cb in callbacks:
                cb(name, tensor)
            count += 1
    return count


def read_small_checkpoint(paths: List[str]) -> List[Tuple[str, torch.Tensor]]:
    with streaming_session(paths) as tensors:
        return list(tensors)


def read_small_checkpoint_owned(paths: List[str]) -> List[Tuple[str, torch.Tensor]]:
    with streaming_session(paths) as tensors:
        return [(name, t.clone()) for name, t in tensors]
