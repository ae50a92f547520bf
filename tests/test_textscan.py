"""The text tests that select files and functions (``analysis.textscan``)."""

from __future__ import annotations

from bufferlint.analysis.frontend.textscan import group_lines, match_lines, word_pattern


def test_match_lines_counts_lines_in_text_and_bytes() -> None:
    text = "stream()\n\nx = 1  # stream\nupstream()\n\n\nstream(stream)\n"
    assert match_lines(word_pattern({"stream"}), text) == [1, 3, 7, 7]  # words only: not `upstream`
    assert match_lines(word_pattern({"stream"}, binary=True), text.encode()) == [1, 3, 7, 7]
    assert match_lines(word_pattern({"absent"}), text) == []


def test_group_lines_needs_every_word_near_the_line() -> None:
    text = 'w.to(\n    "cpu",\n    non_blocking=True,\n)\n' + "\n" * 10 + "w.to('cuda')\n"
    assert group_lines(text, ("to", "cpu", "non_blocking")) == [1]
    assert group_lines(text.encode(), ("to", "cpu", "non_blocking"), binary=True) == [1]
