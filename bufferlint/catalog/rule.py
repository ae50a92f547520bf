"""The shape of a catalog entry: what a rule is called, why it exists, and the examples
that pin down its behaviour (Fixit style, so the docs and the test suite cannot drift apart)."""

from __future__ import annotations

from dataclasses import dataclass

DOC_SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")


@dataclass(frozen=True)
class Invalid:
    """A module that must produce findings of the rule on exactly ``lines`` (and no others of
    this rule; a broken guard, for instance, is BL002 at its ``def`` and BL001 at its call sites).

    ``path`` is where the example is written, relative to the project root: rule packs name
    callables by qualified name, so an example that defines a packed callable must live in
    the module that callable belongs to.
    """

    code: str
    lines: tuple[int, ...]
    path: str = "example.py"


@dataclass(frozen=True)
class Valid:
    """A module that must produce no finding of the rule."""

    code: str
    path: str = "example.py"


@dataclass(frozen=True)
class Rule:
    code: str  # "BL001"
    name: str  # kebab-case, "borrowed-value-to-async-sink"
    summary: str  # the message title, one line
    doc: str  # markdown with exactly the DOC_SECTIONS, in that order
    valid: tuple[Valid, ...]
    invalid: tuple[Invalid, ...]
