"""Index a tokenised corpus: dedup hashes, length stats, a writer thread."""

from __future__ import annotations

import functools
import hashlib
import queue
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from shardfmt import ShardScanner

from tokscan.hooks import HookRegistry
from tokscan.stats import LengthHistogram, PrefixSampler


def _hash_into(table: dict[int, bytes], doc_id: int, tokens: np.ndarray) -> None:
    table[doc_id] = hashlib.blake2b(tokens.tobytes(), digest_size=16).digest()


class Indexer:
    def __init__(self, path: str) -> None:
        self.scanner = ShardScanner(path)
        self.pool = ThreadPoolExecutor(max_workers=4)
        self.hashes: dict[int, bytes] = {}
        self.docs: dict[int, np.ndarray] = {}
        self.out: queue.Queue = queue.Queue(maxsize=1024)
        self.hooks = HookRegistry()
        self.long_docs: list[np.ndarray] = []
        self.longest = 0

    def _count(self, doc_id: int, tokens: np.ndarray) -> int:
        return int(np.count_nonzero(tokens == 0))

    def _remember(self, doc_id: int, tokens: np.ndarray) -> None:
        self.docs[doc_id] = tokens

    def _remember_copy(self, doc_id: int, tokens: np.ndarray) -> None:
        self.docs[doc_id] = np.array(tokens)

    def index_hashes(self) -> None:
        self.scanner.scan(functools.partial(_hash_into, self.hashes))

    def index_pad_counts(self) -> None:
        self.scanner.scan(lambda doc_id, toks: self.pool.submit(self._count, doc_id, toks))

    def index_pad_counts_owned(self) -> None:
        self.scanner.scan(lambda doc_id, toks: self.pool.submit(self._count, doc_id, toks.copy()))

    def keep_docs(self) -> None:
        self.scanner.scan(self._remember)

    def keep_doc_copies(self) -> None:
        self.scanner.scan(self._remember_copy)

    def histogram(self) -> LengthHistogram:
        hist = LengthHistogram()
        self.scanner.scan(hist)
        return hist

    def prefixes(self) -> PrefixSampler:
        sampler = PrefixSampler()
        self.scanner.scan(sampler)
        return sampler

    def write_out(self, sink) -> threading.Thread:
        def writer() -> None:
            while (item := self.out.get()) is not None:
                sink.write(item)

        def on_doc(doc_id: int, toks: np.ndarray) -> None:
            self.out.put((doc_id, toks))

        th = threading.Thread(target=writer, daemon=True)
        th.start()
        self.scanner.scan(on_doc)
        self.out.put(None)
        return th

    def write_out_bytes(self, sink) -> threading.Thread:
        def writer() -> None:
            while (item := self.out.get()) is not None:
                sink.write(item)

        def on_doc(doc_id: int, toks: np.ndarray) -> None:
            self.out.put((doc_id, toks.tobytes()))

        th = threading.Thread(target=writer, daemon=True)
        th.start()
        self.scanner.scan(on_doc)
        self.out.put(None)
        return th

    def install_hooks(self) -> None:
        @self.hooks.register
        def track_longest(doc_id: int, toks: np.ndarray) -> None:
            if len(toks) > self.longest:
                self.longest = len(toks)

        @self.hooks.register
        def keep_long(doc_id: int, toks: np.ndarray) -> None:
            if len(toks) > 32_768:
                self.long_docs.append(toks)

    def run_hooks(self) -> None:
        for doc_id, toks in self.scanner.iter_docs():
            for hook in self.hooks:
                hook(doc_id, toks)
