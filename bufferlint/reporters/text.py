"""Human-readable output, each finding in the ``path:line:col: CODE message`` form editors
and CI log viewers turn into links.

* ``full`` (the default; ``text`` is its old name): the message wrapped to the width
  (``WIDTH``, or the terminal's; continuation lines indented by two spaces), then the
  finding's trace indented by four, one step per line. Findings that
  come from the same producer share the first steps of their trace, so a prefix shared
  with the previous finding is written once: ``    ... same first 4 steps as above``.
* ``concise``: one line per finding, nothing else (for CI logs and grep).

Colour only on a terminal: the location bold, the code red for an ``error`` rule and yellow
for a ``warning`` one (the rule's severity, the same one every other format shows).
"""

from __future__ import annotations

import shutil
import textwrap
from collections import Counter
from pathlib import Path

from bufferlint.catalog import severity
from bufferlint.findings import AnalysisResult, Finding, TraceStep
from bufferlint.reporters.base import count, printable, shown_path

_BOLD, _RED, _YELLOW, _DIM, _RESET = "\x1b[1m", "\x1b[1;31m", "\x1b[1;33m", "\x1b[2m", "\x1b[0m"
WIDTH = 100  # columns of a full report written to a file or pipe (a terminal's own width otherwise)
SHARED_MINIMUM = 2  # a shared prefix of one step is shown: abbreviating it would save nothing


def render(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    width = shutil.get_terminal_size((WIDTH, 24)).columns if color else WIDTH
    lines = []
    previous: tuple[TraceStep, ...] = ()
    for finding in sorted(result.findings, key=lambda f: f.sort_key()):
        first, *rest = _wrapped(_headline(finding, cwd, False), width, "  ")
        lines += [_headline(finding, cwd, color, first), *rest]
        shared = _shared_prefix(finding.trace, previous)
        if shared >= SHARED_MINIMUM:
            lines.append(_paint(color, _DIM, f"    ... same first {count(shared, 'step')} as above"))
        else:
            shared = 0
        for step in finding.trace[shared:]:  # never wrapped: each step stays one `path:line: note`
            lines.append(_paint(color, _DIM, f"    {shown_path(step.path, cwd)}:{step.line}: {printable(step.note)}"))
        previous = finding.trace
    return "".join(line + "\n" for line in lines + _errors(result, cwd, color))


def render_concise(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    lines = [_headline(f, cwd, color) for f in sorted(result.findings, key=lambda f: f.sort_key())]
    return "".join(line + "\n" for line in lines + _errors(result, cwd, color))


def _headline(finding: Finding, cwd: Path, color: bool, line: str | None = None) -> str:
    """``path:line:col: CODE message``; with ``line`` (its first wrapped line), that line painted."""
    where = f"{shown_path(finding.path, cwd)}:{finding.span.line}:{finding.span.column}:"
    message = printable(finding.message) if line is None else line[len(where) + len(finding.rule) + 2:]
    style = _YELLOW if severity(finding.rule) == "warning" else _RED
    return f"{_paint(color, _BOLD, where)} {_paint(color, style, finding.rule)} {message}"


def _errors(result: AnalysisResult, cwd: Path, color: bool) -> list[str]:
    return [f"{_paint(color, _BOLD, shown_path(e.path, cwd) + ':')} {_paint(color, _RED, 'error:')} {printable(e.message)}"
            for e in sorted(result.errors, key=lambda e: str(e.path))]


def _paint(color: bool, style: str, text: str) -> str:
    return f"{style}{text}{_RESET}" if color else text


def _shared_prefix(trace: tuple[TraceStep, ...], previous: tuple[TraceStep, ...]) -> int:
    shared = 0
    for step, before in zip(trace, previous):
        if (step.path, step.line, step.note) != (before.path, before.line, before.note):
            break
        shared += 1
    return shared


def _wrapped(line: str, width: int, indent: str) -> list[str]:
    """``line`` as lines of at most ``width`` columns where it has spaces to break at (a long
    path or name is never cut), continuation lines indented by ``indent``. Escape sequences
    would count as columns, so lines are wrapped before they are painted."""
    if len(line) <= width:
        return [line]
    return textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def summary(result: AnalysisResult, files: int, fixable: tuple[int, int, bool] | None = None) -> str:
    """One line for stderr: counts per rule, how many files could not be analysed, and when
    fixes were planned, how many ``--fix`` applies (``fixable``: applicable now, unsafe ones
    applicable with ``--unsafe-fixes``, whether unsafe fixes are on), as Ruff says it."""
    file_word = count(files, "file")
    if not result.findings and not result.errors:
        return f"All checks passed ({file_word})."
    if result.findings:
        per_rule = ", ".join(f"{n} {rule}" for rule, n in sorted(Counter(f.rule for f in result.findings).items()))
        text = f"Found {count(len(result.findings), 'finding')} ({per_rule}) in {file_word}."
    else:
        text = f"No findings in {file_word}."
    if result.errors:
        text += f" {count(len(result.errors), 'path')} could not be analysed."
    if fixable is not None and (fixable[0] or fixable[1]):
        applicable, more, unsafe = fixable
        text += f" {applicable} fixable with `--fix{' --unsafe-fixes' if unsafe else ''}`"
        text += f" ({more} more with `--unsafe-fixes`)." if more else "."
    return text
