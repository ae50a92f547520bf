"""RaceHarness: a reusing producer plus a held executor, to prove a loader safe in a test."""

from __future__ import annotations

from typing import Any, Iterator, List, Mapping, Optional, Sequence, Tuple

from .held import HeldExecutor, HoldTimeout

SGLANG_MARKER = "_sglang_runai_streamer_tensor"


class RaceHarness:
    """Drive a loader with a producer that reuses one buffer, against a held executor.

    ``weights(n)`` yields ``("w0", view), ("w1", view), ...``: each a *new* tensor object viewing
    the same buffer, filled with ``i`` for the i-th item and marked with ``marker`` (SGLang's
    attribute by default; ``None`` for an unmarked producer). Advancing the producer refills the
    buffer, exactly like the RunAI streamer under ``owned=False``; when it is exhausted it poisons
    the buffer with ``poison`` (the memory is no longer the loader's) and releases
    :attr:`executor`. So every task that did not consume its view before the producer moved on
    observes another tensor's bytes -- deterministically, not 4 times in 17,000.

    Hand :attr:`executor` to the loader (or return it from a patched executor factory with
    :meth:`executor_factory`), then check what the loader produced with :meth:`corrupted` or
    :meth:`assert_intact`.
    """

    def __init__(self, hold_timeout: float = 30.0, poison: float = -1.0) -> None:
        self.executor = HeldExecutor(max_workers=1, hold_timeout=hold_timeout)
        self.poison = poison
        self.names: List[str] = []

    def executor_factory(self, *args: Any, **kwargs: Any) -> HeldExecutor:
        """Ignores its arguments and returns :attr:`executor`: monkeypatch a loader module's
        ``ThreadPoolExecutor`` with it when the loader creates its own pool."""
        return self.executor

    def weights(
        self,
        n: int = 8,
        shape: Sequence[int] = (1024,),
        dtype: Any = None,
        marker: Optional[str] = SGLANG_MARKER,
        prefix: str = "w",
    ) -> Iterator[Tuple[str, Any]]:
        import torch

        self.names = [f"{prefix}{i}" for i in range(n)]
        buffer = torch.empty(tuple(shape), dtype=dtype or torch.float32)
        try:
            for i, name in enumerate(self.names):
                buffer.fill_(i)
                view = buffer.view(buffer.shape)  # a new object over the same memory, like the streamer's
                if marker is not None:
                    setattr(view, marker, True)
                yield name, view
        finally:
            buffer.fill_(self.poison)
            self.executor.release()

    def expected(self, name: str) -> float:
        return float(self.names.index(name))

    def corrupted(self, observed: Mapping[str, Any]) -> List[str]:
        """Names whose observed value (a tensor, or a number) is not the value the producer
        yielded for them; names the loader never delivered count as corrupted too."""
        self.check_timeout()
        bad = []
        for name in self.names:
            if name not in observed:
                bad.append(name)
                continue
            value = observed[name]
            expected = self.expected(name)
            if hasattr(value, "eq"):
                ok = bool(value.eq(expected).all())
            else:
                ok = float(value) == expected
            if not ok:
                bad.append(name)
        return bad

    def assert_intact(self, observed: Mapping[str, Any]) -> None:
        """Fail unless every yielded tensor reached ``observed`` with the bytes it was yielded with."""
        bad = self.corrupted(observed)
        if bad:
            raise AssertionError(
                f"{len(bad)} of {len(self.names)} tensors corrupted: {bad}. The loader handed borrowed "
                f"views to a worker that read them after the producer reused the buffer "
                f"(fix: consume them inline -- bufferlint.runtime.GuardedExecutor / sync_on_marker)."
            )

    def check_timeout(self) -> None:
        if self.executor.timed_out:
            raise HoldTimeout(
                f"the held executor was not released within {self.executor.hold_timeout}s: the code "
                f"under test waited on a held future before the producer was exhausted"
            )

    def close(self) -> None:
        self.executor.shutdown(wait=True)
