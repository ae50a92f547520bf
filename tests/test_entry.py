"""The command pins the hash seed (``bufferlint.entry``): the trace a finding shows must not
change from one run to the next."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = (
    "from bufferlint.entry import pin_hash_seed; pin_hash_seed(); "
    "import os, sys; print(sys.flags.hash_randomization, os.environ.get('PYTHONHASHSEED'))"
)


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=120)


def _environment(**changes: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env.update({k: v for k, v in changes.items() if v is not None})
    return env


def test_a_random_seed_is_replaced_by_a_fixed_one() -> None:
    proc = _run(_environment(), "-c", PROBE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "0"]  # the re-executed process hashes without randomization


def test_a_seed_the_user_chose_is_kept() -> None:
    proc = _run(_environment(PYTHONHASHSEED="7"), "-c", PROBE)
    assert proc.stdout.split() == ["1", "7"]


def test_the_command_runs_through_the_pinned_process() -> None:
    """The re-executed command keeps its arguments, output and exit code."""
    fixture = Path(__file__).parent / "fixtures" / "analysis" / "aliasing.py"
    command = ("-m", "bufferlint", "check", "--no-cache", "--format", "json", "--project-root", str(fixture.parent), str(fixture))
    pinned = _run(_environment(), *command)
    chosen = _run(_environment(PYTHONHASHSEED="0"), *command)
    assert pinned.returncode == chosen.returncode == 1, pinned.stderr
    assert pinned.stdout == chosen.stdout and '"rule": "BL001"' in pinned.stdout
