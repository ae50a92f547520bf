"""Analyses of one run that analyses several times share the trees of unchanged files
(``bufferlint.analysis.frontend.trees``); two files never share one, and outside the scope
nothing is kept."""

from __future__ import annotations

from pathlib import Path

from bufferlint.analysis.frontend.trees import parse_tree, shared_trees
from bufferlint.source import SourceFile, read_source


def _source(path: Path, text: str) -> SourceFile:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    source = read_source(path)
    assert isinstance(source, SourceFile)
    return source


def test_a_file_with_the_same_place_and_text_gets_the_same_tree(tmp_path: Path) -> None:
    real, shadow = tmp_path / "real", tmp_path / "shadow"
    first = _source(real / "pkg" / "m.py", "x = 1\n")
    again = _source(shadow / "pkg" / "m.py", "x = 1\n")
    twin = _source(real / "pkg" / "n.py", "x = 1\n")
    written = _source(shadow / "pkg" / "o.py", "x = 2\n")
    with shared_trees():
        tree = parse_tree(first, real)
        assert parse_tree(again, shadow) is tree  # the shadow project's unchanged file
        assert parse_tree(twin, real) is not tree  # another file of the same text
        with shared_trees():  # nested: the outer scope's trees
            assert parse_tree(again, shadow) is tree
        assert parse_tree(_source(shadow / "pkg" / "m.py", "x = 2\n"), shadow) is not tree  # a fix wrote it
        assert parse_tree(written, shadow) is not None
    assert parse_tree(first, real) is not tree  # outside the scope nothing is kept


def test_a_file_that_does_not_parse_is_not_kept(tmp_path: Path) -> None:
    broken = _source(tmp_path / "bad.py", "def f(:\n")
    with shared_trees():
        first, second = parse_tree(broken, tmp_path), parse_tree(broken, tmp_path)
    assert not hasattr(first, "body") and first == second  # a FileError each time, naming the file
