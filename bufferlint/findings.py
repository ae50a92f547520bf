"""What the analysis reports: findings with their trace, and files it could not analyse.

These are plain data shared by the engine, the reporters and the fixers; nothing here
knows how a finding was computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Span:
    """A source range: 1-based lines, 1-based character columns, end exclusive."""

    path: Path
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class TraceStep:
    """One hop of a borrowed value: where it came from, how it moved, where it was consumed."""

    path: Path
    line: int
    note: str
    # What the engine knows about this hop, for the rules to put into words: ("sink", hazard,
    # sink text[, form]) for the step a rule reports, ("source", kind) for a producer's borrow.
    fact: tuple = ()


# The fact of a step through a call resolved only by method name (``TraceStep.fact``).
BY_NAME = "by-name"
# The fact of a step where project predicates decided that a value is consumed:
# (DECIDED_BY, their qualnames).
DECIDED_BY = "decided-by"
# The fact of a step where a function's own consumer is reached only when what its callers
# pass as a parameter approves the value (``conditions.APPROVES``: ``if decide(w):``):
# (PASSED_GUARD, the function, the parameter, the argument positions asked). The collection
# decides it over the calls of the function (``ProjectAnalysis.decide_passed_guards``).
PASSED_GUARD = "passed-guard"
# The fact of a guard finding's step at a consumer the guard decided, whose own finding it
# stands for: (COVERS, that finding's rule).
COVERS = "covers"


def preferred_trace(new: tuple[TraceStep, ...], old: tuple[TraceStep, ...] | None) -> bool:
    """Is ``new`` the better trace to show? The most direct: the fewest calls the engine
    resolved only by method name (a receiver of unknown type: ``client.weight_iterator()``
    may reach any class's method, so a path through such guesses is the least certain and
    rarely the project's main one), then the shortest, ties broken by content, so that the
    output does not depend on hash order (stable SARIF and baselines across runs)."""
    if old is None:
        return True
    guessed_new, guessed_old = _guessed(new), _guessed(old)
    if guessed_new != guessed_old:
        return guessed_new < guessed_old
    if len(new) != len(old):
        return len(new) < len(old)
    key = lambda trace: [(str(s.path), s.line, s.note, s.fact) for s in trace]  # noqa: E731
    return key(new) < key(old)


def _guessed(trace: tuple[TraceStep, ...]) -> int:
    """How many calls of ``trace`` were resolved only by method name (``preferred_trace``'s
    first criterion; a loop, not a generator: it runs for every reach the fixpoint meets)."""
    count = 0
    for step in trace:
        fact = step.fact
        if fact and fact[0] == BY_NAME:
            count += 1
    return count


@dataclass(frozen=True)
class Edit:
    """Replace the text in a 1-based, end-exclusive range with `replacement`."""

    line: int
    column: int
    end_line: int
    end_column: int
    replacement: str


@dataclass(frozen=True)
class Fix:
    """A mechanical repair of one finding, with Ruff's applicability levels ("safe", "unsafe")."""

    applicability: str
    message: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Finding:
    rule: str
    span: Span
    message: str
    function: str  # enclosing function as "package.module:Class.method" ("package.module" at top level)
    trace: tuple[TraceStep, ...] = ()
    fix: Fix | None = None
    subject: str = ""  # source text of the borrowed value at the reported call (BL001), for fixes
    fix_error: str | None = None  # why a fixable rule has no fix here (the file could not be parsed for fixing)
    # Facts the rules put into words: what consumes or keeps the value (or the guard's name),
    # and the borrow kind (packs' [[kinds]]) of the value that reaches it.
    sink: str = ""
    kind: str = ""
    # The change at the producer that removes every finding from it (raise the library's
    # floor, have it hand out owned values, copy where it hands them out), in words: what a
    # group of findings sharing that producer offers (bufferlint.grouping). "" without one.
    source_fix: str = ""
    # How many other paths from a producer the engine found into this site, besides the
    # trace shown (``preferred_trace``); a lower bound, since paths that meet inside one
    # function keep one trace.
    other_paths: int = 0

    @property
    def path(self) -> Path:
        return self.span.path

    def sort_key(self) -> tuple:
        return (str(self.span.path), self.span.line, self.span.column, self.rule)


@dataclass(frozen=True)
class FileError:
    """A file (or config) that could not be analysed, with one human-readable line why."""

    path: Path
    message: str


@dataclass
class AnalysisResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # analysis limits hit: results may be incomplete
    # The limits told only with a reported finding through their function (``Limit.where``),
    # as (text, path, first line, last line): a cached run reporting other files decides
    # them again (``analysis.incremental.cached``).
    conditional_notices: list[tuple] = field(default_factory=list)
    # Notices about one file's code (a guard left undecided), as (text, path): told when
    # that file is reported on, as a cold run of those files tells them.
    file_notices: list[tuple] = field(default_factory=list)
    # Findings another finding stands for (one finding per bug): a consumer a guard reported
    # as approving marked values decided, as (finding, the spans of those guards' findings).
    # Reported again when none of those is reported (``api``); in a run's report, only
    # those a reported finding stands for, of the selection and not suppressed.
    covered: list[tuple] = field(default_factory=list)
    files_seen: int = 0
    files_parsed: int = 0
    cache: str | None = None  # how the cache served this run (None: no cache), for ``-v``

    def every_site(self) -> list[Finding]:
        """The findings and those they stand for (a report's ``covered``): every place a bug
        shows, one finding each. What must reach every consumer (the runtime shim patches
        each loader) or count each as present (fix verification: a fix that only moves its
        finding under a guard's finding has not removed it)."""
        return self.findings + [finding for finding, _ in self.covered]
