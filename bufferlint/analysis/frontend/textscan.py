"""The text tests that select files and functions: does a text name one of these words, a
group of words close together, which functions does it define. The analysis runs them
(``program``) and so does the cache on changed files (``cached``, ``interface``): one
definition, and no engine to import for a warm run that only needs the tests.
"""

from __future__ import annotations

import bisect
import re

# `def name` at the start of a line (after indentation and `async`; lines end at "\n" or "\r").
# The regex starts with the literal so that it scans like a substring search (0.1 s over the
# sglang tree; anchoring the pattern at line starts cost 2.8 s): the line start is checked after.
_DEF = re.compile(rb"def[ \t]+(\w+)")
_DEF_INDENT = re.compile(rb"[ \t]*(?:async[ \t]+)?")
# `name = staticmethod(` (the literal first, as for `_DEF`; the line's start is checked after).
_STATIC = re.compile(rb"staticmethod\(")
_HELD = re.compile(rb"[ \t]*(\w+)[ \t]*=[ \t]*(?:builtins\.)?")


def callee_words(vocab) -> set[str]:
    """The names whose mention makes a callee matter with nothing borrowed passed to it: it
    may wait for the device (synchronizers) or let a producer refill (sources' ``advances``)."""
    return {p.last_name for p in vocab.synchronizers} | {p.last_name for s in vocab.sources for p in s.advances}


def body_mentions(data: bytes, function: str, pattern: "re.Pattern[bytes]") -> bool:
    """Does the body of a ``def function`` of the text (the lines indented under it) name
    a word of ``pattern``? (A base class's method that may synchronise, before it is parsed.)"""
    lines = data.splitlines()
    head = re.compile(rb"^([ \t]*)(?:async[ \t]+)?def[ \t]+" + re.escape(function.encode()) + rb"\b")
    for number, line in enumerate(lines):
        found = head.match(line)
        if found is None:
            continue
        indent = len(found.group(1))
        for body in lines[number + 1:]:
            if body.strip() and len(body) - len(body.lstrip()) <= indent:
                break
            if pattern.search(body):
                return True
    return False


def defined_names(data: bytes) -> list[str]:
    """The names of the functions a file's text defines (``def`` starting a line), and of
    the class attributes it binds to a static method (``guard = staticmethod(f)``: called as
    a method, ``ProjectIndex.class_method``)."""
    names = []
    for match in _DEF.finditer(data):
        start = match.start()
        line = max(data.rfind(b"\n", 0, start), data.rfind(b"\r", 0, start)) + 1
        if _DEF_INDENT.fullmatch(data, line, start):
            names.append(match.group(1).decode("ascii", "replace"))
    for match in _STATIC.finditer(data):
        start = match.start()
        line = max(data.rfind(b"\n", 0, start), data.rfind(b"\r", 0, start)) + 1
        bound = _HELD.fullmatch(data, line, start)
        if bound is not None:
            names.append(bound.group(1).decode("ascii", "replace"))
    return names


def mentions_group(data: bytes, groups) -> bool:
    """Does the file's text name every word of one of the groups within a few lines? (One of
    the text tests that select a file; ``analysis.cached`` asks the same of changed files.)"""
    for group in groups:
        if all(word.encode() in data for word in group) and group_lines(data, tuple(group), binary=True):
            return True
    return False


def seed_words(pattern) -> tuple[str, ...]:
    """The words a call matching ``pattern`` surely mentions: the called name and the
    keywords it must be passed by name. Not the values the conditions want: those are
    compared by value (``CPU = torch.device("cpu")`` in another module, a parameter's
    default: ``analysis/frontend/constants.py``), so the call need not spell them."""
    words = [pattern.last_name]
    for condition in pattern.required_kwargs:
        if not condition.optional and condition.position is None:
            words.append(condition.key)
    return tuple(sorted(set(words)))


def seed_groups(pattern) -> tuple[tuple[str, ...], ...]:
    """The word groups one of which a call matching ``pattern`` names: ``seed_words``, and
    for a flag that may be passed by keyword or by position (``non_blocking@2=True``), the
    keyword or the literal with the words of the arguments before it (a call passing a flag
    by position passes those by position too: ``.to("cpu", torch.int32, True)`` names
    ``True`` and ``cpu``; ``True`` and ``to`` alone are in every other file). The literal
    counts only where it reads as an argument after another (``group_lines``). A flag passed
    by position as a variable, or after a device given as a constant of another module, is
    not seen by the text: the analysis still matches it where the function is analysed for
    another reason."""
    positional = [c for c in pattern.required_kwargs if not c.optional and c.position is not None and not c.length]
    spelled = {word.group(0) for c in positional if isinstance(c.value, str)
               for word in [re.match(r"[A-Za-z_]\w*", c.value)] if word is not None}
    groups = [seed_words(pattern)]
    for condition in positional:
        if isinstance(condition.value, bool):
            by_position = (str(condition.value), *spelled)
            groups = [tuple(sorted({*group, *words})) for group in groups for words in ((condition.key,), by_position)]
    return tuple(sorted(set(groups)))


def word_pattern(names: set[str], binary: bool = False):
    """A regex matching any of the names as a whole word (None for no names)."""
    ordered = sorted(n for n in names if n)
    if not ordered:
        return None
    if binary:
        return re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in ordered) + rb")\b")
    return re.compile(r"\b(?:" + "|".join(re.escape(n) for n in ordered) + r")\b")


CALL_LINES = 4  # a call's words (``.to(\n "cpu", non_blocking=True\n)``) are this close


# A flag literal of a group (``seed_groups``) is passed by position: after a comma, before
# a comma or the closing parenthesis. Any ``True`` near a ``copy_`` or a ``.to`` and ``cpu``
# selected 34 files more of sglang 0.5.23 (none with a finding); this form, one of them.
_POSITIONAL = r",\s*{}(?=\s*[,)])"


def _group_word(word: str, binary: bool):
    """The regex of one word of a group: the word itself, or a flag literal in place."""
    if word not in ("True", "False"):
        return word_pattern({word}, binary=binary)
    spelled = _POSITIONAL.format(word)
    return re.compile(spelled.encode() if binary else spelled)


def group_lines(text, group: tuple[str, ...], binary: bool = False) -> list[int]:
    """The lines from which every word of ``group`` occurs within ``CALL_LINES`` lines (a
    flag literal as a positional argument, ``_POSITIONAL``)."""
    found = [match_lines(_group_word(word, binary), text) for word in group]
    return [line for line in found[0] if all(_near(lines, line) for lines in found[1:])]


def match_lines(pattern, text) -> list[int]:
    """The line of each match of ``pattern`` in ``text`` (str or bytes), in order; the line
    breaks are counted once, from one match to the next, not from the start for each."""
    newline = b"\n" if isinstance(text, bytes) else "\n"
    lines, line, position = [], 1, 0
    for match in pattern.finditer(text):
        line += text.count(newline, position, match.start())
        position = match.start()
        lines.append(line)
    return lines


def _near(lines: list[int], line: int) -> bool:
    """Does sorted ``lines`` hold one within ``CALL_LINES`` of ``line``?"""
    position = bisect.bisect_right(lines, line - CALL_LINES)
    return position < len(lines) and lines[position] < line + CALL_LINES
