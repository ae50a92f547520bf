import shutil
from pathlib import Path

import pytest

from bufferlint.findings import Finding, Span
from bufferlint.suppressions import (
    directive_codes,
    directive_problems,
    directive_warnings,
    line_directives,
    parse_comment,
    suppressed,
    unused_directives,
)
from conftest import REPO, run_cli


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


# ---------------------------------------------------------------------------
# Strict parsing (Ruff's): a code is a whole token


@pytest.mark.parametrize(
    ("comment", "codes"),
    [
        ("# noqa:BL003garbage", set()),
        ("# noqa: BL003_x", set()),
        ("# noqa: BL001x, BL002", set()),  # a malformed directive suppresses nothing at all
        ("# bufferlint: ignore[BL001", set()),
        ("# bufferlint: ignore[BL001 x]", set()),
        ("# noqa:BL001#BL002", {"BL001"}),
        ("# bufferlint: ignore[BL001]x", {"BL001"}),
    ],
)
def test_codes_are_whole_tokens(comment: str, codes: set) -> None:
    assert directive_codes(comment) == codes


def test_a_prefix_of_a_malformed_code_suppresses_nothing() -> None:
    assert not suppressed(finding(1, "BL003"), "kept.append(w)  # noqa:BL003garbage\n")


def problems(comment: str) -> list[str]:
    return [p for d in parse_comment(comment) for p in directive_problems(d)]


def test_problems_of_directives_that_concern_bufferlint() -> None:
    assert problems("# noqa:BL003garbage") == [
        "malformed suppression `# noqa:BL003garbage`: `BL003garbage` is not a rule code; it suppresses nothing"
    ]
    assert problems("# noqa: BL001, BL999, E501") == ["unknown rule code BL999 in `# noqa: BL001, BL999, E501`"]
    assert problems("# bufferlint: ignore[BL001, E501]") == ["unknown rule code E501 in `# bufferlint: ignore[BL001, E501]`"]
    assert problems("# bufferlint: ignore[BL001") == [
        "malformed suppression `# bufferlint: ignore[BL001`: no closing `]`; it suppresses nothing"
    ]
    # other linters' directives are theirs: neither unknown nor malformed for bufferlint
    assert problems("# noqa: E501") == problems("# noqa:E501x") == problems("# noqa:") == problems("# noqa") == []


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_directives_on_every_line_ending(newline: str) -> None:
    source = SOURCE.replace("\n", newline)
    for line, rule, expected in [(3, "BL001", True), (6, "BL001", True), (8, "BL001", False), (10, "BL002", True)]:
        assert suppressed(finding(line, rule), source) is expected


UNUSED = '''\
executor.submit(f, w)  # noqa: BL001, BL003
kept.append(w)  # bufferlint: ignore
# noqa: BL001
x = 1
y = 2  # noqa: E501
z = 3  # noqa
'''


def test_unused_directives() -> None:
    fired = [finding(1, "BL001")]
    report = [(d.line, codes) for d, codes in unused_directives(UNUSED, fired, enabled=lambda code: True)]
    # a bare noqa and other linters' codes are not bufferlint's to judge
    assert report == [(1, ["BL003"]), (2, ["*"]), (3, ["BL001"])]
    # codes of rules not enabled in this run are not judged
    report = [(d.line, codes) for d, codes in unused_directives(UNUSED, fired, enabled=lambda code: code == "BL001")]
    assert report == [(2, ["*"]), (3, ["BL001"])]


def test_directive_warnings_text() -> None:
    warnings = directive_warnings(UNUSED + "w = 4  # noqa: BL007\n", [finding(1, "BL001")], lambda code: True, warn_unused=True)
    assert warnings == [
        (1, 24, "unused suppression `# noqa: BL001, BL003`: no BL003 finding here"),
        (2, 17, "unused suppression `# bufferlint: ignore`: no finding here"),
        (3, 1, "unused suppression `# noqa: BL001`: no BL001 finding here"),
        (7, 8, "unknown rule code BL007 in `# noqa: BL007`"),
    ]
    assert directive_warnings(UNUSED, [], lambda code: True, warn_unused=False) == []


def test_cli_warns_on_stderr_and_keeps_the_exit_code(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(REPO / "examples" / "runai_loader", root)
    guard = root / "streamloader" / "executor_utils.py"
    guard.write_text(guard.read_text().replace("def should_async_load(weight) -> bool:\n",
                                               "def should_async_load(weight) -> bool:  # noqa:BL002garbage\n", 1))
    with (root / "streamloader" / "loader.py").open("a") as handle:
        handle.write("x = 1  # noqa: BL003, BL999\n")
    run = run_cli("check", "--warn-unused-noqa", ".", cwd=root)
    assert run.returncode == 1
    assert "streamloader/executor_utils.py:4:1: BL002" in run.stdout  # the malformed directive suppresses nothing
    assert [line for line in run.stderr.splitlines() if "warning" in line] == [
        "streamloader/executor_utils.py:4:41: warning: malformed suppression `# noqa:BL002garbage`: "
        "`BL002garbage` is not a rule code; it suppresses nothing",
        "streamloader/loader.py:7:8: warning: unknown rule code BL999 in `# noqa: BL003, BL999`",
        "streamloader/loader.py:7:8: warning: unused suppression `# noqa: BL003, BL999`: no BL003 finding here",
    ]
    assert "warning" not in run_cli("check", "-q", "--warn-unused-noqa", ".", cwd=root).stderr


def test_only_files_that_can_hold_a_bufferlint_directive_are_tokenized() -> None:
    """The byte prefilter run on every file before suppression warnings: any case of a
    `BLn` code, or the `bufferlint:` spelling; nothing else."""
    from bufferlint.suppressions import may_concern_bufferlint

    assert may_concern_bufferlint(b"x = 1  # NOQA: bl001\n")
    assert may_concern_bufferlint(b"x = 1  # bufferlint: ignore\n")
    assert not may_concern_bufferlint(b"x = 1  # noqa: E501\n# noqa\n")
