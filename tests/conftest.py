"""Shared test helpers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


REPO = Path(__file__).resolve().parent.parent


def write(root: Path, files: dict[str, str | bytes]) -> None:
    """Create files under ``root`` from a {relative path: text or bytes} mapping."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m bufferlint ARGS`` in ``cwd``, importing this checkout."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("BUFFERLINT_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "bufferlint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Print the analysis corpus's known gaps (``# todo-expect`` misses, ``# known-fp`` false
    alarms) on every run, so they stay visible."""
    import re

    fixtures = REPO / "tests" / "fixtures"
    gaps = {"todo-expect": [], "known-fp": []}
    for path in sorted(fixtures.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for kind, rule in re.findall(r"#\s*(todo-expect|known-fp):\s*(BL\d{3})", line):
                gaps[kind].append(f"{path.relative_to(fixtures).as_posix()}:{number}: {rule}")
    terminalreporter.write_sep(
        "-", f"known analysis gaps: {len(gaps['todo-expect'])} missed (todo-expect), {len(gaps['known-fp'])} false alarms (known-fp)"
    )
    for kind, lines in gaps.items():
        for line in lines:
            terminalreporter.write_line(f"  {kind}: {line}")
