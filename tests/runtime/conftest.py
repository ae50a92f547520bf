import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixture_pkg(monkeypatch):
    """Import path for tests/runtime/fixtures (the SGLang-shaped loader package)."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    yield
    for name in [m for m in sys.modules if m.startswith("bl_fixture_loaders") or m.startswith("bl_shim_")]:
        del sys.modules[name]


@pytest.fixture(autouse=True)
def _clean_runtime_state():
    """Every test starts and ends with no patches and no executor hook installed."""
    yield
    if "bufferlint.runtime" in sys.modules:
        from bufferlint.runtime import hooks, unpatch

        unpatch()
        assert not hooks.installed() or hooks._global_sanitize, "executor hook leaked from a test"
