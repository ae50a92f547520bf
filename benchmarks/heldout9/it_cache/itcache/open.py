"""Reader construction in one place (which GPU the ring buffer lives on)."""

import instanttensor


def open_shards(files: list[str], device: int = 0):
    return instanttensor.safe_open(files, framework="pt", device=device)
