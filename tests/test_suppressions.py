from pathlib import Path

import pytest

from bufferlint.findings import Finding, Span
from bufferlint.suppressions import directive_codes, line_directives, suppressed


def finding(line: int, rule: str = "BL001") -> Finding:
    return Finding(rule=rule, span=Span(Path("/p/a.py"), line, 5, line, 10), message="m", function="a:f")


@pytest.mark.parametrize(
    ("comment", "codes"),
    [
        ("# noqa", {"*"}),
        ("# NOQA", {"*"}),
        ("#noqa", {"*"}),
        ("# noqa - the copy happens in the worker", {"*"}),
        ("# noqa: BL001", {"BL001"}),
        ("# noqa:BL001,BL002", {"BL001", "BL002"}),
        ("# noqa: BL001, E501 BL002", {"BL001", "E501", "BL002"}),
        ("# noqa: bl001", {"BL001"}),
        ("# noqa: BL001 because the buffer is owned here", {"BL001"}),
        ("# type: ignore  # noqa: BL002", {"BL002"}),
        ("# bufferlint: ignore", {"*"}),
        ("# bufferlint: ignore[BL001]", {"BL001"}),
        ("# bufferlint:ignore[BL001, BL002]", {"BL001", "BL002"}),
        ("# noqa:", set()),  # malformed: suppresses nothing (Ruff)
        ("# noqa: ", set()),
        ("# bufferlint: ignore[]", set()),
        ("# noqanothing", set()),
        ("# bufferlint: ignore-file", set()),
        ("# TODO: handle noqa", set()),
    ],
)
def test_directive_codes(comment: str, codes: set) -> None:
    assert directive_codes(comment) == codes


SOURCE = '''\
def load(executor, weights, params):
    for name, w in weights:
        executor.submit(copy, params[name], w)  # noqa: BL001
        executor.submit(copy, params[name], w)  # noqa: BL002
        # bufferlint: ignore[BL001]
        executor.submit(copy, params[name], w)
        x = 1  # noqa
        executor.submit(copy, params[name], w)
        executor.submit(copy, params[name], "# noqa")
        executor.submit(copy, params[name], w)  # bufferlint: ignore
'''


@pytest.mark.parametrize(
    ("line", "rule", "expected"),
    [
        (3, "BL001", True),  # same line
        (3, "BL002", False),  # other code
        (4, "BL001", False),
        (4, "BL002", True),
        (6, "BL001", True),  # own-line comment above
        (6, "BL002", False),
        (7, "BL001", True),  # bare noqa
        (8, "BL001", False),  # a trailing comment on the previous statement does not count
        (9, "BL001", False),  # "# noqa" inside a string is not a comment
        (10, "BL002", True),
        (2, "BL001", False),
    ],
)
def test_suppressed(line: int, rule: str, expected: bool) -> None:
    assert suppressed(finding(line, rule), SOURCE) is expected


def test_code_lines_of_a_multiline_string_are_not_comment_lines() -> None:
    source = 'x = """\n# noqa\n"""\ny = 1\n'
    assert line_directives(source) == {}


def test_comment_above_is_not_carried_past_its_next_line() -> None:
    source = "# noqa: BL001\n\nexecutor.submit(f, w)\n"
    assert not suppressed(finding(3), source)
    assert suppressed(finding(2), source)


def test_untokenizable_tail_keeps_earlier_comments() -> None:
    source = "executor.submit(f, w)  # noqa: BL001\nx = (\n"
    assert suppressed(finding(1), source)


def test_directives_are_cached_per_text() -> None:
    line_directives.cache_clear()
    source = "executor.submit(f, w)  # noqa\n"
    for _ in range(3):
        suppressed(finding(1), source)
    assert line_directives.cache_info().misses == 1
