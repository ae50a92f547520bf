"""The shape of a catalog entry: what a rule is called, why it exists, and the examples
that pin down its behaviour (Fixit style, so the docs and the test suite cannot drift apart)."""

from __future__ import annotations

from dataclasses import dataclass

from bufferlint.hazards import Hazard

SEVERITIES = ("error", "warning")
"""A finding is an ``error`` when its trace ends where wrong bytes are read, a ``warning``
when it ends where a view is kept (it corrupts data only if what was kept is read later)."""

DOC_SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")
# Ruff's optional sections, after the core ones and in this order, where they apply.
OPTIONAL_SECTIONS = ("## Fix safety", "## Known problems", "## Options", "## References")


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
    # What the rule's fixes (unsafe ones included) change, as (before, after) snippets of the
    # module: the fixed module is the code with each replaced (Fixit's expected_replacement).
    fixed: tuple[tuple[str, str], ...] = ()

    def fixed_code(self) -> str:
        code = self.code
        for before, after in self.fixed:
            assert code.count(before) == 1, f"fix snippet {before!r} must occur once"
            code = code.replace(before, after)
        return code


@dataclass(frozen=True)
class Valid:
    """A module that must produce no finding of the rule."""

    code: str
    path: str = "example.py"


@dataclass(frozen=True)
class Rule:
    """One rule as a unit (Fixit's LintRule, Ruff's violation): the engine reports facts
    (rule code, site, trace, borrow kind) and the rule puts them into words and fixes them.

    ``message`` and ``step_note`` are templates over the finding's facts: ``{sink}`` (what
    consumes or keeps the value; the guard's name for BL002), and from the value's borrow kind
    ``{marker}``, ``{copy}`` (the kind's copy of ``value``) and ``{remedy}``.
    """

    code: str  # "BL001"
    hazard: Hazard  # what the engine computes that this rule reports (one rule per hazard)
    name: str  # kebab-case, "borrowed-value-to-async-sink"
    summary: str  # the message title, one line
    doc: str  # markdown: the DOC_SECTIONS in order, then any OPTIONAL_SECTIONS in order
    valid: tuple[Valid, ...]
    invalid: tuple[Invalid, ...]
    message: str = ""
    step_note: str = ""  # the trace step where the value is consumed, kept or checked
    # The words of particular forms of the hazard, by the name the engine gives the form at
    # the sink step (its fact: ("sink", hazard, sink, form)): (form, message, step_note), over
    # the same facts. A form not listed here is worded by ``message`` and ``step_note``.
    forms: tuple[tuple[str, str, str], ...] = ()
    # The fix at the producer that removes all of its findings of this rule (a group's fix,
    # bufferlint.grouping), over the same facts; "" for the default, composed from the kind:
    # raise the library's floor, the kind's remedy, copy where the producer hands values out.
    source_fix: str = ""
    # "error" or "warning": the one severity every channel shows (SEVERITIES; README's Rules table)
    severity: str = "error"
    # Its fix changes a function other findings' flows call (a guard): fixing it may remove
    # them too, so its fixes are verified apart from theirs (bufferlint.fixes.verify).
    fix_reaches_callers: bool = False
    # A rule still being measured against real code (Ruff's preview rules): it runs only when
    # a selector names its full code (`extend-select = ["BL006"]`), never through a prefix
    # (`select = ["BL"]`, the default), so a new rule's false alarms reach only those who ask.
    preview: bool = False

    def wording(self, form: str) -> tuple[str, str]:
        """The message and sink-step templates of one form of the hazard (``forms``)."""
        for name, message, step_note in self.forms:
            if name == form:
                return message, step_note
        return self.message, self.step_note
