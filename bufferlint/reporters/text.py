"""Human-readable output, one finding per line in the ``path:line:col: CODE message`` form
editors and CI log viewers turn into links, with the finding's trace indented below it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bufferlint.findings import AnalysisResult
from bufferlint.reporters.base import count, printable, shown_path

_BOLD, _RED, _CYAN, _DIM, _RESET = "\x1b[1m", "\x1b[1;31m", "\x1b[36m", "\x1b[2m", "\x1b[0m"


def render(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    def paint(style: str, text: str) -> str:
        return f"{style}{text}{_RESET}" if color else text

    lines = []
    for finding in sorted(result.findings, key=lambda f: f.sort_key()):
        where = f"{shown_path(finding.path, cwd)}:{finding.span.line}:{finding.span.column}:"
        lines.append(f"{paint(_BOLD, where)} {paint(_RED, finding.rule)} {printable(finding.message)}")
        for step in finding.trace:
            lines.append(paint(_DIM, f"    {shown_path(step.path, cwd)}:{step.line}: {printable(step.note)}"))
    for error in sorted(result.errors, key=lambda e: str(e.path)):
        lines.append(f"{paint(_BOLD, shown_path(error.path, cwd) + ':')} {paint(_RED, 'error:')} {printable(error.message)}")
    return "".join(line + "\n" for line in lines)


def summary(result: AnalysisResult, files: int) -> str:
    """One line for stderr: counts per rule, and how many files could not be analysed."""
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
    return text
