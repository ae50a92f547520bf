"""pytest plugin (entry point ``pytest11: bufferlint``).

Fixtures:

* ``held_executor`` -- a one-worker :class:`~bufferlint.testing.HeldExecutor`, shut down after
  the test;
* ``bufferlint_race`` -- a :class:`~bufferlint.testing.RaceHarness`.

Option ``--bufferlint-sanitize`` (or ``BUFFERLINT_SANITIZE=1``) turns on the runtime sanitizer
for the session: any executor submission with borrowed arguments whose bytes change before the
task reads them fails with BufferReuseError.

Loaded in every pytest run where bufferlint is installed, so it imports nothing heavy (no
torch) until a fixture is used.
"""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bufferlint")
    group.addoption(
        "--bufferlint-sanitize",
        action="store_true",
        default=False,
        help="check every executor submission with borrowed buffers (bufferlint.runtime sanitizer)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "bufferlint_race: test uses the bufferlint race harness")
    if config.getoption("--bufferlint-sanitize", default=False) or os.environ.get("BUFFERLINT_SANITIZE"):
        from bufferlint.runtime import hooks, sanitizer

        if config.getoption("--bufferlint-sanitize", default=False) or sanitizer.env_enabled():
            hooks.enable_sanitizer()


@pytest.fixture
def held_executor():
    from bufferlint.testing import HeldExecutor

    executor = HeldExecutor(max_workers=1)
    try:
        yield executor
    finally:
        executor.shutdown(wait=True)


@pytest.fixture
def bufferlint_race():
    from bufferlint.testing import RaceHarness

    harness = RaceHarness()
    try:
        yield harness
    finally:
        harness.close()
    harness.check_timeout()
