"""``--add-noqa``: suppress every current finding with a ``# noqa: BLxxx`` comment (Ruff's
migration aid: turn the check on now, fix the suppressed findings over time).

On each reported line the codes are merged into an existing ``# noqa: ...`` comment, or
``  # noqa: BL001`` is appended; codes already there are never repeated. Where a trailing
comment is impossible (the line ends inside a multi-line string, or with a backslash
continuation) the directive goes alone on a new line above, which suppresses the line
below it. Every change is checked before it is kept: the file must parse to the same
program as before and the suppression must take effect on the finding's line; a line
where neither placement passes that check is left alone and reported.

Files keep their encoding (including a UTF-8 BOM) and line endings, and are replaced
atomically; a symlink's target is written, not the link. ``noqa_text`` places the same
directives in a text and returns it (an editor's quick fix), writing nothing.
"""

from __future__ import annotations

import ast
import io
import os
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from bufferlint.atomic import write_atomic
from bufferlint.deepstack import run_deep
from bufferlint.findings import FileError, Finding
from bufferlint.source import read_bytes, source_encoding
from bufferlint.suppressions import ALL, line_directives, parse_comment
from bufferlint.textlines import line_ending, split_lines



@dataclass
class NoqaReport:
    added: int = 0  # lines given (or extended with) a directive
    files: int = 0  # files changed
    skipped: list[tuple[Path, int]] = field(default_factory=list)  # lines no directive could be placed on
    errors: list[FileError] = field(default_factory=list)


def add_noqa(findings: Sequence[Finding]) -> NoqaReport:
    report = NoqaReport()
    by_file: dict[Path, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for finding in findings:
        by_file[finding.path][finding.span.line].add(finding.rule.upper())
    for path in sorted(by_file):
        _add_to_file(path, by_file[path], report)
    return report


def _add_to_file(path: Path, wanted: dict[int, set[str]], report: NoqaReport) -> None:
    target = Path(os.path.realpath(path))
    data = read_bytes(target)
    if isinstance(data, FileError):
        report.errors.append(FileError(path, data.message))
        return
    try:
        encoding = source_encoding(data)
        original = data.decode(encoding)
        text, added, skipped = run_deep(_with_directives, original, wanted)
    except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError, MemoryError) as exc:
        report.errors.append(FileError(path, f"cannot add noqa directives: {exc}"))
        return
    report.skipped += [(path, line) for line in skipped]
    if text == original:
        return
    try:
        write_atomic(target, text.encode(encoding))
    except (OSError, UnicodeEncodeError) as exc:
        report.errors.append(FileError(path, f"cannot write noqa directives: {getattr(exc, 'strerror', None) or exc}"))
        return
    report.added += added
    report.files += 1


def noqa_text(text: str, findings: Sequence[Finding]) -> str | None:
    """``text`` with the directives ``--add-noqa`` would add for ``findings`` (all in this
    text's file), without writing anything: what an editor's "suppress" quick fix applies.
    None when no directive could be placed (or the text does not parse); ``text`` itself
    when every finding is already suppressed."""
    wanted: dict[int, set[str]] = defaultdict(set)
    for finding in findings:
        wanted[finding.span.line].add(finding.rule.upper())
    try:  # deep: ast.dump recurses as deep as the file nests (a generated 1,500-term sum)
        new, _, skipped = run_deep(_with_directives, text, wanted)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return None if skipped else new


def _with_directives(text: str, wanted: dict[int, set[str]]) -> tuple[str, int, list[int]]:
    """(new text, lines given a directive, lines none could be placed on). Raises
    SyntaxError or ValueError when ``text`` does not parse."""
    program = _program(text)
    added, skipped = 0, []
    for line in sorted(wanted, reverse=True):  # bottom up: a directive inserted above shifts only later lines
        present = line_directives(text).get(line, frozenset())
        missing = sorted(code for code in wanted[line] if code not in present and "*" not in present)
        if not missing:
            continue
        for candidate, covered in ((_trailing(text, line, missing), line), (_above(text, line, missing), line + 1)):
            if candidate is not None and _keeps_program(candidate, program) and set(missing) <= line_directives(candidate).get(covered, frozenset()):
                text = candidate
                added += 1
                break
        else:
            skipped.append(line)
    return text, added, skipped


def _trailing(text: str, number: int, codes: list[str]) -> str | None:
    """``text`` with ``codes`` merged into line ``number``'s noqa comment, or a new one appended."""
    lines = split_lines(text)
    if not 1 <= number <= len(lines):
        return None
    line = lines[number - 1]
    content, ending = line[: len(line) - len(line_ending(line))], line_ending(line)
    for start, comment in _comments(text).get(number, []):
        directive = next((d for d in parse_comment(comment) if d.kind == "noqa" and d.codes and d.codes != ALL), None)
        if directive is not None:
            at = start + directive.column - 1 + len(directive.text)
            content = content[:at] + ", " + ", ".join(codes) + content[at:]
            break
    else:
        content = content.rstrip(" \t") + "  # noqa: " + ", ".join(codes)
    lines[number - 1] = content + ending
    return "".join(lines)


def _above(text: str, number: int, codes: list[str]) -> str | None:
    """``text`` with a directive alone on a new line above line ``number``, indented like it."""
    lines = split_lines(text)
    if not 1 <= number <= len(lines):
        return None
    line = lines[number - 1]
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    ending = line_ending(line) or next((line_ending(other) for other in lines if line_ending(other)), "\n")
    lines.insert(number - 1, f"{indent}# noqa: {', '.join(codes)}{ending}")
    return "".join(lines)


def _comments(text: str) -> dict[int, list[tuple[int, str]]]:
    """Line -> (column, text) of the comment tokens on it."""
    comments: dict[int, list[tuple[int, str]]] = defaultdict(list)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]].append((token.start[1], token.string))
    except (tokenize.TokenError, SyntaxError):
        pass
    return comments


def _program(text: str) -> list[tuple[int, str]]:
    """What a directive must not change: the text's tokens but its comments and blank lines
    (linear, where comparing syntax trees costs the square of the nesting: seconds on a
    generated 20,000-term sum). Raises SyntaxError or ValueError when ``text`` does not parse."""
    ast.parse(text)
    try:
        return [(token.type, token.string) for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline)
                if token.type not in (tokenize.COMMENT, tokenize.NL)]
    except tokenize.TokenError as exc:
        raise SyntaxError(str(exc)) from None


def _keeps_program(text: str, program: list[tuple[int, str]]) -> bool:
    try:
        return _program(text) == program
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
