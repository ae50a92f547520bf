"""Build an embedding index from a columnar dump read chunk by chunk."""
from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from chunkio import ChunkReader


def _write_rows(out: dict[str, float], key: str, rows: np.ndarray) -> None:
    out[key] = float(rows.mean())


def _index_rows(key: str, rows: np.ndarray) -> tuple[str, int]:
    return key, int(np.count_nonzero(rows))


class EmbeddingIndex:
    def __init__(self, path: str) -> None:
        self.reader = ChunkReader(path, chunk_rows=8192)
        self.rows: dict[str, np.ndarray] = {}
        self.means: dict[str, float] = {}
        self.pool = ThreadPoolExecutor(max_workers=4)
        self.futures = []

    def remember(self, key: str, rows: np.ndarray) -> None:
        self.rows[key] = rows

    def remember_owned(self, key: str, rows: np.ndarray) -> None:
        self.rows[key] = np.array(rows)

    def build_lazy(self) -> None:
        self.reader.on_chunk(self.remember)
        self.reader.run()

    def build_owned(self) -> None:
        self.reader.on_chunk(self.remember_owned)
        self.reader.run()

    def build_parallel(self) -> None:
        self.reader.on_chunk(lambda key, rows: self.futures.append(self.pool.submit(_index_rows, key, rows)))
        self.reader.run()

    def build_parallel_copied(self) -> None:
        self.reader.on_chunk(lambda key, rows: self.futures.append(self.pool.submit(_index_rows, key, rows.copy())))
        self.reader.run()

    def build_means(self) -> None:
        self.reader.on_chunk(functools.partial(_write_rows, self.means))
        self.reader.run()
