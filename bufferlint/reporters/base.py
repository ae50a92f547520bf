"""What every reporter shares: the call signature and how paths are shown."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from bufferlint.findings import AnalysisResult


class Reporter(Protocol):
    """``cwd``: paths are shown relative to it. ``root``: the project root, which
    fingerprints (SARIF) are relative to; the current directory when not given."""

    def __call__(self, result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str: ...


def display_path(path: Path, cwd: Path) -> str:
    """Relative to ``cwd`` when under it, else absolute; always with ``/`` separators, so
    output is stable across platforms and clickable in editors and CI logs."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(cwd).as_posix()
    except ValueError:
        return absolute.as_posix()
