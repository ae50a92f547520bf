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
"""

from __future__ import annotations

import io
import re
import tokenize
from functools import lru_cache

from bufferlint.findings import Finding

ALL = frozenset({"*"})  # what a bare directive suppresses

_CODES = r"[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*"
_NOQA = re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODES})|(?![:\w]))", re.IGNORECASE)
_IGNORE = re.compile(rf"#\s*bufferlint:\s*ignore(?:\[\s*(?P<codes>{_CODES})\s*\]|(?![\[\w-]))")


def directive_codes(comment: str) -> frozenset[str]:
    """The rule codes one comment token suppresses: ALL for a bare directive, empty for none.

    A malformed directive (``# noqa:`` with no codes, ``ignore[]``) suppresses nothing, as
    in Ruff: a typo must not silence every rule on the line.
    """
    codes: set[str] = set()
    for pattern in (_NOQA, _IGNORE):
        for match in pattern.finditer(comment):
            if match.group("codes") is None:
                return ALL
            codes.update(code.upper() for code in re.split(r"[\s,]+", match.group("codes")))
    return frozenset(codes)


@lru_cache(maxsize=256)
def line_directives(source_text: str) -> dict[int, frozenset[str]]:
    """Line number -> codes suppressed on that line, for one file (cached: a file with many
    findings is tokenized once)."""
    directives: dict[int, frozenset[str]] = {}
    code_lines: set[int] = set()
    comments: dict[int, frozenset[str]] = {}
    tokens = tokenize.generate_tokens(io.StringIO(source_text).readline)
    try:
        for token in tokens:
            if token.type == tokenize.COMMENT:
                codes = directive_codes(token.string)
                if codes:
                    comments[token.start[0]] = codes
            elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                code_lines.update(range(token.start[0], token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass  # keep the comments read so far; a file the engine could analyse rarely gets here
    for line, codes in comments.items():
        directives[line] = directives.get(line, frozenset()) | codes
        if line not in code_lines:  # a comment on its own line also covers the next line
            directives[line + 1] = directives.get(line + 1, frozenset()) | codes
    return directives


def suppressed(finding: Finding, source_text: str) -> bool:
    """Whether a suppression comment in the finding's file covers this finding."""
    codes = line_directives(source_text).get(finding.span.line, frozenset())
    return "*" in codes or finding.rule.upper() in codes
