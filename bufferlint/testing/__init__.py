"""bufferlint.testing: make buffer-reuse races deterministic in tests.

* :class:`HeldExecutor` -- an executor whose tasks start only after ``release()``: submit,
  overwrite the buffer, release, and a loader that hands borrowed views to workers reads the
  overwritten bytes every time instead of 4 loads in 17,000.
* :class:`RaceHarness` -- a producer that yields views of one buffer it refills (like the RunAI
  streamer) plus a HeldExecutor that is released when the producer is exhausted; the pytest
  plugin (``pytest11`` entry point ``bufferlint``) provides it as the ``bufferlint_race``
  fixture, and a plain HeldExecutor as ``held_executor``.

Importing this package does not import torch.
"""

from .held import HeldExecutor, HoldTimeout
from .race import RaceHarness

__all__ = ["HeldExecutor", "HoldTimeout", "RaceHarness"]
