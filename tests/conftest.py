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
