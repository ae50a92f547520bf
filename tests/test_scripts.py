"""The development scripts and benchmarks answer ``--help`` (a newcomer's first call) and the
robustness sweep runs on a directory given relative to where it is started."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

SCRIPTS = sorted([*(REPO / "scripts").glob("*.py"), *(REPO / "benchmarks").glob("*.py")])


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_help(script: Path) -> None:
    proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: "), proc.stdout


def test_sweep_of_a_relative_directory() -> None:
    proc = subprocess.run([sys.executable, "scripts/sweep.py", "examples/runai_loader"], capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "runai_loader: 5 files" in proc.stdout and "0 internal errors" in proc.stdout, proc.stdout


def test_sweep_names_a_missing_directory() -> None:
    proc = subprocess.run([sys.executable, "scripts/sweep.py", "no/such/dir"], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert proc.returncode == 2 and "no/such/dir: not a directory" in proc.stderr, proc.stderr
