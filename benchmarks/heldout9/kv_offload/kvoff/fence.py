"""Stream scopes used around host<->device copies."""

from contextlib import contextmanager
from typing import Iterator

import torch


@contextmanager
def fenced(stream: torch.cuda.Stream) -> Iterator[torch.cuda.Stream]:
    """Run the block on `stream`; on leaving, wait on the host until the stream is idle."""
    try:
        with torch.cuda.stream(stream):
            yield stream
    finally:
        stream.synchronize()
