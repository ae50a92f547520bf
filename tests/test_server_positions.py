"""The server's position conversions and minimal edits: bufferlint's 1-based character
columns become the code units the client chose, and an edit changes only the lines that
differ (and, applied by an LSP client, gives exactly the new text)."""

from __future__ import annotations

from hypothesis import given, strategies as st
from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from bufferlint.server.positions import Positions, text_edit

UTF16 = PositionCodec(types.PositionEncodingKind.Utf16)
UTF8 = PositionCodec(types.PositionEncodingKind.Utf8)
UTF32 = PositionCodec(types.PositionEncodingKind.Utf32)


def test_columns_become_the_clients_code_units() -> None:
    text = "x = '\U0001F40D caf\u00e9'; pool.submit(w)\n"
    column = text.index("pool") + 1  # 1-based characters
    assert Positions(text, UTF32).position(1, column).character == column - 1
    assert Positions(text, UTF16).position(1, column).character == column  # the snake is two UTF-16 units
    assert Positions(text, UTF8).position(1, column).character == column - 1 + 3 + 1  # 4 bytes, and 2 for the é


def test_only_cr_lf_and_crlf_end_lines() -> None:
    text = "a = 1\x0c\nb = 2\rc = 3\r\nd = 4"  # a form feed does not end a line (str.splitlines says it does)
    positions = Positions(text, UTF16)
    assert positions.position(4, 1) == types.Position(line=3, character=0)
    assert positions.line(2) == types.Range(start=types.Position(line=1, character=0),
                                            end=types.Position(line=1, character=5))


def test_positions_past_the_text_stay_inside_it() -> None:
    positions = Positions("a = 1\nb = 2", UTF16)
    assert positions.position(9, 1) == types.Position(line=1, character=5)
    assert positions.position(1, 40) == types.Position(line=0, character=5)
    assert Positions("a = 1\n", UTF16).end() == types.Position(line=1, character=0)


def test_an_edit_replaces_only_the_lines_that_differ() -> None:
    old = "one\ntwo\nthree\nfour\n"
    edit = text_edit(Positions(old, UTF16), "one\n2\nthree\nfour\n")
    assert edit.range == types.Range(start=types.Position(line=1, character=0), end=types.Position(line=2, character=0))
    assert edit.new_text == "2\n"


lines = st.lists(st.sampled_from(["a\n", "b\n", "c", "\u00e9\r\n", "\U0001F40D\r", "x = 1\n", ""]), max_size=8)


@given(lines, lines)
def test_an_applied_edit_gives_exactly_the_new_text(before: list[str], after: list[str]) -> None:
    old, new = "".join(before), "".join(after)
    document = TextDocument("file:///t.py", old, position_codec=UTF16)
    document.apply_change(types.TextDocumentContentChangePartial(
        range=(edit := text_edit(Positions(old, UTF16), new)).range, text=edit.new_text))
    assert document.source == new
