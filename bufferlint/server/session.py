"""Which open documents belong to which project, and what each project's last analysis said.

A document belongs to the project ``bufferlint check`` would put it in (``api.open_project``:
the nearest pyproject.toml, setup.cfg or setup.py, ...); a document the project's
``exclude``/``extend-exclude`` covers gets no diagnostics (as in Ruff's server). One
analysis covers all of a project's open documents at once: the analysis is whole-project
anyway, so reporting on every open file costs what reporting on one costs, and a change
in one module reaches the diagnostics of every open module that depends on it. The
project's cache (``.bufferlint_cache``) makes a run after a save cheap when the saved file
cannot matter to the last analysis (its recorded dependencies: the files it parsed and the
names whose mention makes a file matter).
"""

from __future__ import annotations

import threading
import time
from asyncio import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bufferlint import api
from bufferlint.discovery import absolute
from bufferlint.globs import exclude_matcher

WARM_SECONDS = 1.0
"""A project whose last analysis took at most this long is analysed as the user types
(debounced); a slower one when a file is saved, opened or an action is applied."""


@dataclass
class Analysed:
    """One analysis of a project: its report and the text of each document it read.
    ``planned`` is set once the findings' fixes are planned (after the diagnostics are out)."""

    report: api.Report
    texts: dict[Path, str]
    seconds: float
    planned: Future | None = None
    cancel: threading.Event = field(default_factory=threading.Event)  # stops planning: a newer analysis comes


@dataclass
class Session:
    roots: dict[Path, Path] = field(default_factory=dict)  # open document -> its project root
    last: dict[Path, Analysed] = field(default_factory=dict)  # project root -> its last analysis
    # document -> the texts the actions offered on it produce (a change to one is analysed at once)
    expected: dict[Path, set[str]] = field(default_factory=dict)
    # open documents not analysed now (excluded, or their project could not be opened): tried
    # again at every save (of the configuration, say)
    waiting: set[Path] = field(default_factory=set)

    def open(self, path: Path) -> Path | str | None:
        """Track an opened document: its project root, None when excluded, or why the
        project cannot be used (bad configuration: one line)."""
        path = absolute(path)
        project = api.open_project(api.CheckOptions(paths=[path]))
        if isinstance(project, str) or _excluded(path, project):
            self.roots.pop(path, None)
            self.waiting.add(path)
            return project if isinstance(project, str) else None
        self.waiting.discard(path)
        self.roots[path] = project.root
        return project.root

    def close(self, path: Path) -> Path | None:
        self.expected.pop(absolute(path), None)
        self.waiting.discard(absolute(path))
        return self.roots.pop(absolute(path), None)

    def documents(self, root: Path) -> list[Path]:
        return sorted(path for path, r in self.roots.items() if r == root)

    def projects_seeing(self, path: Path) -> set[Path]:
        """The projects of open documents that a change to ``path`` may concern: its own,
        and any whose root is above it (a pyproject.toml or rule pack saved, a module
        saved that no open document belongs with)."""
        path = absolute(path)
        return {root for root in self.roots.values() if root == path.parent or root in path.parents}

    def warm(self, root: Path) -> bool:
        last = self.last.get(root)
        return last is not None and last.seconds <= WARM_SECONDS

    def analysed(self, path: Path) -> Analysed | None:
        root = self.roots.get(absolute(path))
        return self.last.get(root) if root is not None else None


def analyse(root: Path, texts: dict[Path, str], progress: Callable[[int, int], None] | None = None) -> Analysed:
    """Check the open documents of one project as ``bufferlint check`` would, on their
    current text. Fixes are planned afterwards (``plan_fixes``): the diagnostics do not
    wait for LibCST. ``progress`` hears (files parsed, functions analysed)."""
    start = time.perf_counter()
    report = api.check(api.CheckOptions(paths=sorted(texts), project_root=root, overlays=texts, progress=progress))
    return Analysed(report, texts, time.perf_counter() - start)


def plan_fixes(analysed: Analysed) -> None:
    """Plan the fixes of the findings (what the code actions offer)."""
    analysed.report = api.plan_fixes(analysed.report, analysed.texts, editor=True, cancel=analysed.cancel)


def fix_all(root: Path, path: Path, texts: dict[Path, str]) -> str | None:
    """The text of ``path`` with its safe fixes applied and verified, or None (nothing to
    fix, or the run could not start)."""
    fixed = api.fix(api.CheckOptions(paths=[path], project_root=root, overlays=texts), write=False)
    if isinstance(fixed, api.Report):
        return None
    change = fixed.changed.get(path)
    return change[1] if change is not None else None


def _excluded(path: Path, project: api.Project) -> bool:
    """Whether the project's excludes cover ``path`` or a folder it is in."""
    try:
        parts = path.relative_to(project.root).parts
    except ValueError:
        return False
    excluded = exclude_matcher(project.settings.excludes)
    return any(excluded("/".join(parts[: i + 1])) for i in range(len(parts)))
