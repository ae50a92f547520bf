"""GitHub Actions workflow commands: one ``::error`` annotation per finding, shown on the
pull request's diff and in the run summary without any upload step.

    ::error file=pkg/loader.py,line=7,col=13,endLine=7,endColumn=51,title=bufferlint (BL001)::message

The message carries the trace on further lines. Escaping is GitHub's (the
``@actions/core`` toolkit's): in the message ``%``, ``\\r`` and ``\\n`` become ``%25``,
``%0D`` and ``%0A``; property values additionally escape ``:`` and ``,`` as ``%3A``
and ``%2C``. Paths are relative to the current directory, which in a workflow is the
checkout root that GitHub resolves them against.
"""

from __future__ import annotations

from pathlib import Path

from bufferlint.findings import AnalysisResult
from bufferlint.reporters.base import display_path, printable, shown_path


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: object) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None)
    return f"::{name} {props}::{escape_data(message)}" if props else f"::{name}::{escape_data(message)}"


def _printable(text: str) -> str:
    """Other control characters and undecodable file-name bytes escaped; line breaks are
    GitHub's to escape (``%0A``), so a file named ``a\\nb.py`` is found by its real name."""
    return printable(text, line_breaks=True)


def render(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    lines = []
    for f in sorted(result.findings, key=lambda f: f.sort_key()):
        message = "\n".join([_printable(f.message), *(f"{shown_path(s.path, cwd)}:{s.line}: {_printable(s.note)}" for s in f.trace)])
        if f.fix is not None:
            message += f"\nfix available ({f.fix.applicability}): {_printable(f.fix.message)}"
        lines.append(command(
            "error",
            message,
            file=_printable(display_path(f.path, cwd)),
            line=f.span.line,
            col=f.span.column,
            endLine=f.span.end_line,
            endColumn=f.span.end_column,
            title=f"bufferlint ({f.rule})",
        ))
    for e in sorted(result.errors, key=lambda e: str(e.path)):
        lines.append(command("error", _printable(e.message), file=_printable(display_path(e.path, cwd)), title="bufferlint"))
    return "".join(line + "\n" for line in lines)
