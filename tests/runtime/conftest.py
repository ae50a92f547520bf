import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
PTH = ROOT / "bufferlint" / "runtime" / "bufferlint-runtime.pth"


@pytest.fixture(scope="session")
def hooked_python(tmp_path_factory):
    """A virtualenv's python whose site-packages holds the start-up hook's ``.pth`` exactly as
    the wheel installs it. bufferlint comes from ``PYTHONPATH`` (``ROOT``), and this
    interpreter's packages (torch) from ``packages_path``: the virtualenv is made from the base
    interpreter, which need not have them."""
    env_dir = tmp_path_factory.mktemp("hooked") / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    site_packages = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                   capture_output=True, text=True, check=True).stdout.strip()
    shutil.copy(PTH, Path(site_packages) / PTH.name)  # what installing the wheel does
    return python


#: This interpreter's site-packages (torch, safetensors), for children of ``hooked_python``.
packages_path = sysconfig.get_path("purelib")


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
