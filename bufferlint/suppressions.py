"""Suppression comments, applied to findings after the engine has produced them.

Two spellings, each with an optional list of codes (comma or space separated, case does
not matter) and a bare form that suppresses every rule:

* ``# noqa: BL001`` / ``# noqa`` (the flake8 and Ruff convention, so existing habits and
  editor integrations work);
* ``# bufferlint: ignore[BL001]`` / ``# bufferlint: ignore`` (unambiguous when a line also
  carries noqa comments meant for other linters).

A comment counts on the finding's line, or alone on the line above it (a trailing comment
on the previous statement belongs to that statement). Comments are read with ``tokenize``
so that a ``# noqa`` inside a string literal never suppresses anything.

Codes parse strictly, as in Ruff: a code is a whole token (letters then digits, ended by a
comma, whitespace, ``#``, ``]`` or the end), so ``# noqa:BL003garbage`` is not BL003 but a
malformed directive, which suppresses nothing. Words after the codes (``# noqa: BL001
because ...``) end the list. ``directive_problems`` says what is wrong with a directive
that concerns bufferlint (malformed, or naming a code that is no bufferlint rule), and
``unused_directives`` which of them suppressed nothing (``--warn-unused-noqa``, Ruff's
RUF100).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

from bufferlint.catalog import RULES
from bufferlint.findings import Finding

ALL = frozenset({"*"})  # what a bare directive suppresses
PREFIX = "BL"  # a noqa code with this prefix is meant for bufferlint

_NOQA = re.compile(r"#\s*noqa(?:(?P<colon>:)|(?![\w]))", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*bufferlint:\s*ignore(?:(?P<bracket>\[)|(?![\w-]))")
_CODE = re.compile(r"[A-Za-z]+[0-9]+")
_SEPARATOR = re.compile(r"[\s,]*")
_OURS = re.compile(rf"(?<![A-Za-z]){PREFIX}[0-9]", re.IGNORECASE)


@dataclass(frozen=True)
class Directive:
    """One suppression comment as written, and what it suppresses."""

    line: int
    column: int  # 1-based
    text: str  # the directive itself, e.g. "# noqa: BL001"
    kind: str  # "noqa" or "ignore"
    codes: frozenset[str]  # ALL for a bare directive, empty for a malformed one
    malformed: str | None = None  # what makes it malformed ("`BL003x` is not a rule code")
    own_line: bool = False  # alone on its line: also covers the next line

    @property
    def ours(self) -> bool:
        """Does the directive concern bufferlint (so its problems are ours to report)?"""
        return self.kind == "ignore" or bool(_OURS.search(self.text))

    def covers(self, line: int) -> bool:
        return line == self.line or (self.own_line and line == self.line + 1)


def parse_comment(comment: str, line: int = 1, column: int = 1) -> list[Directive]:
    """The directives in one comment token."""
    found = []
    for pattern, kind, opener, closer in ((_NOQA, "noqa", "colon", None), (_IGNORE, "ignore", "bracket", "]")):
        for match in pattern.finditer(comment):
            if match.group(opener) is None:
                codes, malformed, end = ALL, None, match.end()
            else:
                codes, malformed, end = _codes(comment, match.end(), closer)
            text = comment[match.start():end].rstrip()
            found.append(Directive(line, column + match.start(), text, kind, codes, malformed))
    return found


def _codes(comment: str, at: int, closer: str | None) -> tuple[frozenset[str], str | None, int]:
    """Parse a code list from ``at``; returns (codes, what is malformed or None, end)."""
    codes: set[str] = set()
    position = _SEPARATOR.match(comment, at).end()
    while True:
        match = _CODE.match(comment, position)
        if match is None:
            break
        after = comment[match.end():match.end() + 1]
        if after and not (after.isspace() or after in ",#" or after == closer):
            token = re.match(r"[^\s,#\]]*", comment[position:]).group()
            return frozenset(), f"`{token}` is not a rule code", position + len(token)
        codes.add(match.group().upper())
        position = _SEPARATOR.match(comment, match.end()).end()
    end = position
    if closer is not None:
        if comment[position:position + 1] != closer:
            token = re.match(r"[^\s,#\]]*", comment[position:]).group()
            what = f"`{token}` is not a rule code" if token else f"no closing `{closer}`"
            return frozenset(), what, position + len(token)
        end = position + 1
    if not codes:
        return frozenset(), "no rule codes", end
    return frozenset(codes), None, end


def directive_codes(comment: str) -> frozenset[str]:
    """The rule codes one comment token suppresses: ALL for a bare directive, empty for none.

    A malformed directive (``# noqa:`` with no codes, ``ignore[]``, ``# noqa:BL003x``)
    suppresses nothing, as in Ruff: a typo must not silence a rule, or every rule.
    """
    codes: set[str] = set()
    for directive in parse_comment(comment):
        if directive.codes == ALL:
            return ALL
        codes |= directive.codes
    return frozenset(codes)


@lru_cache(maxsize=256)
def file_directives(source_text: str) -> tuple[Directive, ...]:
    """Every directive of one file (cached: a file with many findings is tokenized once).
    A file whose text holds no directive at all is not tokenized (most files of a tree)."""
    if not (_NOQA.search(source_text) or _IGNORE.search(source_text)):
        return ()
    directives: list[Directive] = []
    code_lines: set[int] = set()
    # newline="": lines end at "\r\n", "\r" or "\n", as for Python (old-Mac files included)
    tokens = tokenize.generate_tokens(io.StringIO(source_text, newline="").readline)
    try:
        for token in tokens:
            if token.type == tokenize.COMMENT:
                directives += parse_comment(token.string, token.start[0], token.start[1] + 1)
            elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                code_lines.update(range(token.start[0], token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass  # keep the comments read so far; a file the engine could analyse rarely gets here
    return tuple(
        Directive(d.line, d.column, d.text, d.kind, d.codes, d.malformed, own_line=d.line not in code_lines)
        for d in directives
    )


@lru_cache(maxsize=256)
def line_directives(source_text: str) -> dict[int, frozenset[str]]:
    """Line number -> codes suppressed on that line, for one file."""
    lines: dict[int, frozenset[str]] = {}
    for directive in file_directives(source_text):
        if directive.codes:
            for line in (directive.line, directive.line + 1) if directive.own_line else (directive.line,):
                lines[line] = lines.get(line, frozenset()) | directive.codes
    return lines


def suppressed(finding: Finding, source_text: str) -> bool:
    """Whether a suppression comment in the finding's file covers this finding."""
    codes = line_directives(source_text).get(finding.span.line, frozenset())
    return "*" in codes or finding.rule.upper() in codes


def directive_problems(directive: Directive) -> list[str]:
    """What is wrong with a directive that concerns bufferlint, one sentence each."""
    if not directive.ours:
        return []
    if directive.malformed is not None:
        return [f"malformed suppression `{directive.text}`: {directive.malformed}; it suppresses nothing"]
    unknown = sorted(code for code in directive.codes - ALL if code not in RULES and (
        directive.kind == "ignore" or code.startswith(PREFIX)))
    return [f"unknown rule code {code} in `{directive.text}`" for code in unknown]


def unused_directives(
    source_text: str, findings: Iterable[Finding], enabled: Callable[[str], bool]
) -> list[tuple[Directive, list[str]]]:
    """The directives concerning bufferlint that suppress none of ``findings`` (this file's,
    before suppression), with their unused codes (["*"] for a bare one). Codes of rules not
    enabled in this run, unknown and malformed codes (reported as problems) are not judged."""
    findings = list(findings)
    unused = []
    for directive in file_directives(source_text):
        if not directive.ours or not directive.codes:
            continue
        covered = [f for f in findings if directive.covers(f.span.line)]
        if directive.codes == ALL:
            if not covered:
                unused.append((directive, ["*"]))
            continue
        fired = {f.rule.upper() for f in covered}
        idle = sorted(c for c in directive.codes if c in RULES and enabled(c) and c not in fired)
        if idle:
            unused.append((directive, idle))
    return unused


MENTIONS = re.compile(r"noqa|bufferlint:", re.IGNORECASE)
"""Files without a match have no directive: they need not be tokenized."""

_OUR_CODE = re.compile(rb"bl[0-9]")


def may_concern_bufferlint(data: bytes) -> bool:
    """Can this file's bytes hold a directive that concerns bufferlint (``# bufferlint:``,
    or a code starting ``BL`` and a digit, in any case)? A cheap test run on every file
    of the tree before decoding and tokenizing the few that pass (source encodings are
    ASCII-compatible, so the bytes show what the text would)."""
    return b"bufferlint" in data or _OUR_CODE.search(data.lower()) is not None


def directive_warnings(
    source_text: str, findings: Iterable[Finding], enabled: Callable[[str], bool], warn_unused: bool
) -> list[tuple[int, int, str]]:
    """(line, column, message) for each problem of this file's directives, and with
    ``warn_unused`` each directive that suppresses nothing, in file order."""
    if not MENTIONS.search(source_text):
        return []
    warnings = [(d.line, d.column, problem) for d in file_directives(source_text) for problem in directive_problems(d)]
    if warn_unused:
        for directive, codes in unused_directives(source_text, findings, enabled):
            what = "no finding" if codes == ["*"] else "no " + ", ".join(codes) + " finding"
            warnings.append((directive.line, directive.column, f"unused suppression `{directive.text}`: {what} here"))
    return sorted(warnings)
