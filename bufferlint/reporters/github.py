"""GitHub Actions workflow commands: one annotation per finding (``::error``, or
``::warning`` for a rule whose severity is warning), shown on the pull request's diff and in
the run summary without any upload step.

    ::error file=pkg/loader.py,line=7,col=13,endLine=7,endColumn=51,title=bufferlint (BL001)::message

The message carries the trace on further lines. Escaping is GitHub's (the
``@actions/core`` toolkit's): in the message ``%``, ``\\r`` and ``\\n`` become ``%25``,
``%0D`` and ``%0A``; property values additionally escape ``:`` and ``,`` as ``%3A``
and ``%2C``. Paths are relative to the current directory, which in a workflow is the
checkout root that GitHub resolves them against.

GitHub shows at most 10 annotations of each kind per step (and 50 per job), so a run with
more findings loses the rest on the pull request. So when ``$GITHUB_STEP_SUMMARY`` names a
file (it does in every Actions step), ``job_summary`` is appended to it: a Markdown table of
every finding and file error, shown on the run's summary page (cut at
``SUMMARY_LIMIT`` bytes, GitHub's limit being 1 MiB, with a line saying how many rows were left out).
"""

from __future__ import annotations

from pathlib import Path

from bufferlint.catalog import severity
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


SUMMARY_LIMIT = 900 * 1024


def job_summary(result: AnalysisResult, cwd: Path, headline: str) -> str:
    """Markdown for the job summary: ``headline`` (the run's one-line summary) and a table of
    every finding and file error."""
    rows = [
        (severity(f.rule), f.rule, f"{shown_path(f.path, cwd)}:{f.span.line}:{f.span.column}", f.message)
        for f in sorted(result.findings, key=lambda f: f.sort_key())
    ] + [("error", "", shown_path(e.path, cwd), e.message) for e in sorted(result.errors, key=lambda e: str(e.path))]
    head = f"### bufferlint\n\n{_cell(headline)}\n"
    if not rows:
        return head
    lines = [head, "| severity | rule | location | message |", "| --- | --- | --- | --- |"]
    size = sum(len(line.encode("utf-8")) + 1 for line in lines)
    for shown, (level, rule, where, message) in enumerate(rows):
        line = f"| {level} | {rule} | `{_cell(where)}` | {_cell(message)} |"
        size += len(line.encode("utf-8")) + 1
        if size > SUMMARY_LIMIT:
            lines.append(f"\n{len(rows) - shown} more rows left out (GitHub's job summary size limit); "
                         "run `bufferlint check` for all of them.")
            break
        lines.append(line)
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text that stays in one Markdown table cell."""
    return printable(text).replace("|", "\\|")


def render(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    lines = []
    for f in sorted(result.findings, key=lambda f: f.sort_key()):
        message = "\n".join([_printable(f.message), *(f"{shown_path(s.path, cwd)}:{s.line}: {_printable(s.note)}" for s in f.trace)])
        if f.fix is not None:
            message += f"\nfix available ({f.fix.applicability}): {_printable(f.fix.message)}"
        lines.append(command(
            severity(f.rule),
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
