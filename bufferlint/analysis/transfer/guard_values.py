"""What the guard evaluation (``guard_eval``) computes with: abstract values, the paths
through a function with their variables, and the ways a path leaves a block.

A value is a constant, the *subject* (the argument that carries the marker), *blind*
(unknown, but computed without looking at the marker: a branch on it may go either way for
some marked value) or *unknown* (it may depend on the marker in a way the evaluation cannot
follow: a branch on it makes the paths below it *uncertain*); evaluating an expression may
also raise (``raised``: reading a marker the subject does not carry).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from bufferlint.analysis.frontend.syntax import walk


class GiveUp(Exception):
    """The evaluation hit a budget (``budget``: a cap, told to the user), or met a statement
    it does not model."""

    def __init__(self, why: str, budget: bool = False) -> None:
        super().__init__(why)
        self.why = why
        self.budget = budget


@dataclass(frozen=True)
class Abstract:
    """One abstract value. ``kind``: ``const`` (``value`` known), ``subject`` (the marked
    argument), ``names`` (a set of the subject's attribute names, the marker's among them),
    ``blind`` (unknown, marker-independent; ``truth`` when a branch decided it),
    ``unknown`` (may depend on the marker), ``raise`` (evaluating it raised ``value``)."""

    kind: str
    value: Any = None
    truth: bool | None = None


SUBJECT = Abstract("subject")
NAMES = Abstract("names")  # the set of the subject's attribute names (``frozenset(vars(w))``)
BLIND = Abstract("blind")
UNKNOWN = Abstract("unknown")
NONE = Abstract("const", None)


def const(value: Any) -> Abstract:
    return Abstract("const", value)


def raised(name: str) -> Abstract:
    return Abstract("raise", name)


def truth(value: Abstract) -> str:
    """``true``, ``false``, ``blind`` (either, independently of the marker) or ``unknown``."""
    if value.kind == "const":
        try:
            return "true" if value.value else "false"
        except Exception:  # noqa: BLE001 - a literal whose truth raises: say nothing of it
            return "blind"
    if value.kind == "blind" and value.truth is not None:
        return "true" if value.truth else "false"
    if value.kind == "unknown":
        return "unknown"
    return "blind"


def with_truth(value: Abstract, wanted: bool) -> Abstract:
    """``value`` on the branch where its truth is ``wanted``."""
    return Abstract("blind", None, wanted) if value.kind in ("blind", "subject") else value


@dataclass
class Path:
    """The variables on one path and whether every branch taken on it was decidable."""

    env: dict = field(default_factory=dict)
    certain: bool = True

    def fork(self, certain: bool = True) -> "Path":
        return Path(dict(self.env), self.certain and certain)


@dataclass
class Exit:
    """How a path leaves a block: ``fall`` (on to the next statement), ``return``,
    ``raise`` (``value.value`` is the exception's name), ``break`` or ``continue``."""

    how: str
    path: Path
    value: Abstract = NONE


def involved(node: ast.AST, path: Path) -> bool:
    """Does ``node`` read a variable holding the subject or an unknown?"""
    for child in walk(node):
        if isinstance(child, ast.Name) and path.env.get(child.id, BLIND).kind in ("subject", "unknown"):
            return True
    return False


def merge(paths: list[Path]) -> list[Path]:
    """Paths with the same variables are one (certain if either is)."""
    if len(paths) < 2:  # most merges: nothing to compare (a key costs a sort of every variable)
        return list(paths)
    out: dict[object, Path] = {}
    for p in paths:
        try:
            key: object = frozenset(p.env.items())  # the same variables, in any order
        except TypeError:
            key = (id(p),)
        old = out.get(key)
        if old is None:
            out[key] = p
        elif p.certain and not old.certain:
            out[key] = p
    return list(out.values())
