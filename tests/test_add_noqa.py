"""``--add-noqa``: every current finding gets a ``# noqa: BLxxx`` that really suppresses
it, without changing the program, the file's encoding or its line endings."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from bufferlint.findings import Finding, Span
from bufferlint.noqa import add_noqa
from conftest import run_cli, write
from test_formats import GUARD, GUARD_PATH, LOADER


def at(path: Path, line: int, rule: str = "BL001") -> Finding:
    return Finding(rule, Span(path, line, 5, line, 10), "message", "mod:f")


def noqa(tmp_path: Path, content: str | bytes, lines: list[tuple[int, str]]) -> tuple[bytes, object]:
    path = tmp_path / "mod.py"
    write(tmp_path, {"mod.py": content})
    report = add_noqa([at(path, line, rule) for line, rule in lines])
    return path.read_bytes(), report


def test_appends_a_directive(tmp_path: Path) -> None:
    out, report = noqa(tmp_path, "def f(ex, w):\n    ex.submit(g, w)   \n", [(2, "BL001")])
    assert out == b"def f(ex, w):\n    ex.submit(g, w)  # noqa: BL001\n"
    assert (report.added, report.files, report.skipped) == (1, 1, [])


def test_several_codes_on_one_line_and_no_duplicates(tmp_path: Path) -> None:
    out, report = noqa(tmp_path, "ex.submit(g, w)\n", [(1, "BL002"), (1, "BL001"), (1, "BL001")])
    assert out == b"ex.submit(g, w)  # noqa: BL001, BL002\n"
    assert report.added == 1


def test_merges_into_an_existing_noqa(tmp_path: Path) -> None:
    out, _ = noqa(tmp_path, "ex.submit(g, w)  # noqa: E501 -- long line\n", [(1, "BL001")])
    assert out == b"ex.submit(g, w)  # noqa: E501, BL001 -- long line\n"
    out, _ = noqa(tmp_path, "ex.submit(g, w)  # type: ignore  # NOQA:BL002\n", [(1, "BL001"), (1, "BL002")])
    assert out == b"ex.submit(g, w)  # type: ignore  # NOQA:BL002, BL001\n"


def test_nothing_to_add_when_already_suppressed(tmp_path: Path) -> None:
    for line in ("ex.submit(g, w)  # noqa\n", "ex.submit(g, w)  # noqa: bl001\n", "# bufferlint: ignore[BL001]\nex.submit(g, w)\n"):
        out, report = noqa(tmp_path, line, [(line.count("\n"), "BL001")])
        assert out == line.encode() and (report.added, report.files) == (0, 0)


def test_other_comments_are_kept(tmp_path: Path) -> None:
    out, _ = noqa(tmp_path, "ex.submit(g, w)  # bufferlint: ignore[BL002]\n", [(1, "BL001")])
    assert out == b"ex.submit(g, w)  # bufferlint: ignore[BL002]  # noqa: BL001\n"


def test_noqa_inside_a_string_is_not_a_comment(tmp_path: Path) -> None:
    out, _ = noqa(tmp_path, 'ex.submit(g, "# noqa: E501", w)\n', [(1, "BL001")])
    assert out == b'ex.submit(g, "# noqa: E501", w)  # noqa: BL001\n'


def test_line_ending_in_a_multiline_string_gets_the_directive_above(tmp_path: Path) -> None:
    source = 'def f(ex, w):\n    ex.submit(g, w, """\n    text""")\n'
    out, report = noqa(tmp_path, source, [(2, "BL001")])
    assert out == b'def f(ex, w):\n    # noqa: BL001\n    ex.submit(g, w, """\n    text""")\n'
    assert report.skipped == []


def test_backslash_continuation_gets_the_directive_above(tmp_path: Path) -> None:
    out, _ = noqa(tmp_path, "def f(ex, w):\n    fut = ex.submit(g, w) \\\n        .result\n", [(2, "BL001")])
    assert out == b"def f(ex, w):\n    # noqa: BL001\n    fut = ex.submit(g, w) \\\n        .result\n"


def test_a_line_nothing_can_be_added_to_is_reported(tmp_path: Path) -> None:
    # line 2 continues line 1 with a backslash and ends inside a string: neither placement works
    source = 'x = 1 + \\\n    f(w, """\nabc""")\n'
    out, report = noqa(tmp_path, source, [(2, "BL001")])
    assert out == source.encode() and report.skipped == [(tmp_path / "mod.py", 2)] and report.files == 0


def test_lines_below_an_inserted_line_are_still_found(tmp_path: Path) -> None:
    source = 'ex.submit(g, w, """\n""")\nex.submit(g, w)\n'
    out, report = noqa(tmp_path, source, [(1, "BL001"), (3, "BL002")])
    assert out == b'# noqa: BL001\nex.submit(g, w, """\n""")\nex.submit(g, w)  # noqa: BL002\n'
    assert report.added == 2


def test_keeps_line_endings_encoding_bom_and_mode(tmp_path: Path) -> None:
    out, _ = noqa(tmp_path, b"x = 1\r\nex.submit(g, w)\r\ny = 2\r\n", [(2, "BL001")])
    assert out == b"x = 1\r\nex.submit(g, w)  # noqa: BL001\r\ny = 2\r\n"

    latin = "# -*- coding: latin-1 -*-\nex.submit(g, 'caf\xe9')\n".encode("latin-1")
    out, _ = noqa(tmp_path, latin, [(2, "BL001")])
    assert out == "# -*- coding: latin-1 -*-\nex.submit(g, 'caf\xe9')  # noqa: BL001\n".encode("latin-1")

    out, _ = noqa(tmp_path, b"\xef\xbb\xbfex.submit(g, '\xc3\xa9')\n", [(1, "BL001")])
    assert out == b"\xef\xbb\xbfex.submit(g, '\xc3\xa9')  # noqa: BL001\n"

    path = tmp_path / "mod.py"
    path.write_text("ex.submit(g, w)\n")
    path.chmod(0o750)
    add_noqa([at(path, 1)])
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert [p.name for p in tmp_path.iterdir()] == ["mod.py"]  # no temporary file left behind


def test_writes_through_a_symlink(tmp_path: Path) -> None:
    write(tmp_path, {"real.py": "ex.submit(g, w)\n"})
    (tmp_path / "link.py").symlink_to(tmp_path / "real.py")
    add_noqa([at(tmp_path / "link.py", 1)])
    assert (tmp_path / "link.py").is_symlink()
    assert (tmp_path / "real.py").read_text() == "ex.submit(g, w)  # noqa: BL001\n"


# ---------------------------------------------------------------------------
# End to end with the real engine


def test_add_noqa_end_to_end(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "loader.py": LOADER, GUARD_PATH: GUARD})
    proc = run_cli("check", "--add-noqa", ".", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "Added 2 noqa directives to 2 files.\n")
    assert "            executor.submit(fn, w)  # noqa: BL001\n" in (tmp_path / "loader.py").read_text()
    assert (tmp_path / GUARD_PATH).read_text().startswith("def should_async_load(weight):  # noqa: BL002\n")

    proc = run_cli("check", ".", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "All checks passed (2 files).\n")
    proc = run_cli("check", "--add-noqa", ".", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "Added 0 noqa directives to 0 files.\n")
    assert run_cli("check", "--add-noqa", "-q", ".", cwd=tmp_path).stderr == ""


def test_add_noqa_respects_the_baseline_and_selection(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "loader.py": LOADER, GUARD_PATH: GUARD})
    assert run_cli("check", "--write-baseline", "bl.json", "loader.py", cwd=tmp_path).returncode == 0
    proc = run_cli("check", "--add-noqa", "--baseline", "bl.json", ".", cwd=tmp_path)
    assert proc.stderr.startswith("Added 1 noqa directive to 1 file.")
    assert "noqa" not in (tmp_path / "loader.py").read_text()  # baselined, so left alone
    assert "# noqa: BL002" in (tmp_path / GUARD_PATH).read_text()


def test_cli_reports_lines_it_could_not_annotate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    import bufferlint.analysis
    from bufferlint import cli
    from bufferlint.findings import AnalysisResult

    write(tmp_path, {"pyproject.toml": "", "mod.py": 'x = 1 + \\\n    f(w, """\nabc""")\ny = f(w)\n'})
    monkeypatch.chdir(tmp_path)
    found = AnalysisResult(findings=[at(tmp_path / "mod.py", 2), at(tmp_path / "mod.py", 4)])
    monkeypatch.setattr(bufferlint.analysis, "analyze_project", lambda *args, **kwargs: found)
    assert cli.main(["check", "--add-noqa", "mod.py"]) == 1
    assert capsys.readouterr() == (
        "",
        "bufferlint: could not add a noqa directive at mod.py:2\nAdded 1 noqa directive to 1 file.\n",
    )
    assert (tmp_path / "mod.py").read_text().endswith("y = f(w)  # noqa: BL001\n")
    assert cli.main(["check", "--add-noqa", "--exit-zero", "mod.py"]) == 0
