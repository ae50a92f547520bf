"""Human-readable output, each finding in the ``path:line:col: CODE message`` form editors
and CI log viewers turn into links.

* ``full`` (the default; ``text`` is its old name): the message wrapped to the width
  (``WIDTH``, or the terminal's; continuation lines indented by two spaces), then the
  finding's trace indented by four, one step per line. Findings that come from the same
  producer are one group (bufferlint.grouping), written once: the producer's
  ``path:line:`` and how many findings it causes, the versions under which it lends, the
  fix there that removes them all, the trace steps they all share, then each site on one
  line, with what happens there (each site's trace and message are in the JSON and SARIF
  reports, and in ``concise``'s lines).
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
from bufferlint import grouping
from bufferlint.reporters.base import count, printable, shown_path

_BOLD, _RED, _YELLOW, _DIM, _RESET = "\x1b[1m", "\x1b[1;31m", "\x1b[1;33m", "\x1b[2m", "\x1b[0m"
WIDTH = 100  # columns of a full report written to a file or pipe (a terminal's own width otherwise)


def render(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    width = shutil.get_terminal_size((WIDTH, 24)).columns if color else WIDTH
    lines = []
    for group in grouping.group_findings(result.findings, root or cwd):
        if len(group.findings) > 1 and group.source is not None:
            lines += _group(group, cwd, color, width)
        else:
            lines += [line for finding in group.findings for line in _finding(finding, cwd, color, width)]
    return "".join(line + "\n" for line in lines + _errors(result, cwd, color))


def _group(group: grouping.Group, cwd: Path, color: bool, width: int) -> list[str]:
    """A producer's findings at once: where it hands the values out, under which versions,
    the fix there that removes them all, the steps every trace shares, then each site on
    one line (its message without the versions the header states)."""
    source = group.source
    assert source is not None
    where = f"{shown_path(source.path, cwd)}:{source.line}:"
    per_rule = ", ".join(f"{n} {rule}" for rule, n in sorted(Counter(f.rule for f in group.findings).items()))
    head = f"{count(len(group.findings), 'finding')} ({per_rule}) from one producer: {printable(source.note)}"
    first, *rest = _wrapped(f"{where} {head}", width, "  ")
    lines = [f"{_paint(color, _BOLD, where)}{first[len(where):]}", *rest]
    if group.versions:
        lines += _wrapped(f"  {printable(group.versions)}", width, "    ")
    if group.fix:
        lines += _wrapped(f"  fix at the producer: {printable(group.fix)}", width, "    ")
    shared = group.shared_trace()[1:]
    if shared:
        lines += ["  every trace starts the same:", *_steps(shared, cwd, color)]
    lines.append(f"  {count(len(group.findings), 'site')} (each with its trace in `--output-format json` or `sarif`):")
    for finding in group.findings:
        at_site = _at_site(finding, group)
        if finding.other_paths:
            at_site += f" (the most direct of {finding.other_paths + 1} paths into this site)"
        lines.append("    " + _headline(finding, cwd, color, message=at_site))
    return lines


def _at_site(finding: Finding, group: grouping.Group) -> str:
    """What happens at a grouped site, in one line: its trace's last step (where the value
    is consumed or kept), else its message without the versions its group states."""
    last = finding.trace[-1] if finding.trace else None
    if last is not None and last.fact[:1] == ("sink",):
        return last.note
    return finding.message.removeprefix(group.condition)


def _finding(finding: Finding, cwd: Path, color: bool, width: int) -> list[str]:
    """One finding: its wrapped headline, then its trace."""
    first, *rest = _wrapped(_headline(finding, cwd, False), width, "  ")
    lines = [_headline(finding, cwd, color, first), *rest, *_steps(finding.trace, cwd, color)]
    if finding.other_paths:
        lines.append(_paint(color, _DIM, f"    (the most direct of {finding.other_paths + 1} paths found into this site)"))
    return lines


def _steps(steps: tuple[TraceStep, ...], cwd: Path, color: bool) -> list[str]:
    """Trace steps indented by four, never wrapped: each stays one ``path:line: note``."""
    return [_paint(color, _DIM, f"    {shown_path(s.path, cwd)}:{s.line}: {printable(s.note)}") for s in steps]


def render_concise(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    lines = [_headline(f, cwd, color) for f in sorted(result.findings, key=lambda f: f.sort_key())]
    return "".join(line + "\n" for line in lines + _errors(result, cwd, color))


def _headline(finding: Finding, cwd: Path, color: bool, line: str | None = None, *, message: str | None = None) -> str:
    """``path:line:col: CODE message``; with ``line`` (its first wrapped line), that line
    painted; with ``message``, that message instead of the finding's."""
    where = f"{shown_path(finding.path, cwd)}:{finding.span.line}:{finding.span.column}:"
    if line is not None:
        message = line[len(where) + len(finding.rule) + 2:]
    else:
        message = printable(finding.message if message is None else message)
    style = _YELLOW if severity(finding.rule) == "warning" else _RED
    return f"{_paint(color, _BOLD, where)} {_paint(color, style, finding.rule)} {message}"


def _errors(result: AnalysisResult, cwd: Path, color: bool) -> list[str]:
    return [f"{_paint(color, _BOLD, shown_path(e.path, cwd) + ':')} {_paint(color, _RED, 'error:')} {printable(e.message)}"
            for e in sorted(result.errors, key=lambda e: str(e.path))]


def _paint(color: bool, style: str, text: str) -> str:
    return f"{style}{text}{_RESET}" if color else text


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
