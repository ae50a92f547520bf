"""Buffers refilled in place (the stdlib pack's `[[host-writes]]` entries with `refills`:
`sock.recv_into(buf)`, `f.readinto(buf)`, `os.preadv(fd, [buf], offset)`): the behaviour of
the real socket, io, os, NumPy and torch the entries and the engine rely on, and what the
engine makes of it (the findings themselves are the fixture project
tests/fixtures/producers/recv_into, run by test_producer_packs.py)."""

from __future__ import annotations

import io
import os
import shutil
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch

from bufferlint.analysis import analyze_project
from bufferlint.catalog.words import kind_for, render
from bufferlint.config import load_settings
from bufferlint.packs import PackError, builtin_vocabulary, vocabulary_from_dict

FIXTURE = Path(__file__).parent / "fixtures" / "producers" / "recv_into"
RECORD = 8


@pytest.fixture
def pair():
    left, right = socket.socketpair()
    yield left, right
    left.close()
    right.close()


def test_a_view_handed_to_a_pool_reads_the_next_record(pair) -> None:
    """The hazard, made deterministic: the task runs after the loop refilled the buffer (a
    gate holds it), and what it reads of `np.frombuffer(buf)` is the next record; a copy
    taken at the hand-off keeps the one it was given."""
    sender, receiver = pair
    buf = bytearray(RECORD)
    gate = threading.Event()

    def handle(view):
        gate.wait(5)
        return bytes(view)

    sender.sendall(b"A" * RECORD + b"B" * RECORD)
    with ThreadPoolExecutor(1) as pool:
        receiver.recv_into(buf, RECORD)
        borrowed = pool.submit(handle, np.frombuffer(buf, dtype=np.uint8))
        copied = pool.submit(handle, np.frombuffer(buf, dtype=np.uint8).copy())
        receiver.recv_into(buf, RECORD)  # the next round of the loop
        gate.set()
        assert borrowed.result() == b"B" * RECORD
        assert copied.result() == b"A" * RECORD


@pytest.mark.parametrize("refill", ["recv_into", "readinto", "preadv", "recvmsg_into"])
def test_each_refill_overwrites_the_views_and_not_the_copies(refill: str, pair, tmp_path: Path) -> None:
    """What the engine takes as views (borrowed until the next refill) and as copies (owned):
    checked against the real calls for each refilling entry's shape. An object array holds
    the views themselves when their shapes differ (NumPy makes a 2-D array of their values
    otherwise, a copy): the analysis, which knows no shapes, takes it as holding them."""
    sender, receiver = pair
    path = tmp_path / "records"
    path.write_bytes(b"A" * RECORD + b"B" * RECORD)
    fd = os.open(path, os.O_RDONLY)
    stream = io.BytesIO(path.read_bytes())
    sender.sendall(path.read_bytes())
    buf = bytearray(RECORD)
    offset = 0

    def fill() -> None:
        nonlocal offset
        if refill == "recv_into":
            assert receiver.recv_into(buf, RECORD) == RECORD
        elif refill == "recvmsg_into":
            assert receiver.recvmsg_into([buf])[0] == RECORD
        elif refill == "readinto":
            assert stream.readinto(buf) == RECORD
        else:
            assert os.preadv(fd, [buf], offset) == RECORD
        offset += RECORD

    try:
        fill()
        views = {
            "memoryview": memoryview(buf),
            "memoryview slice": memoryview(buf)[:4],
            "numpy.frombuffer": np.frombuffer(buf, dtype=np.uint8),
            "numpy.asarray of a view": np.asarray(memoryview(buf)),
            "numpy.array(copy=False)": np.array(memoryview(buf), copy=False),
            "object array of views": np.array([memoryview(buf)[:3], memoryview(buf)[3:]], dtype=object)[0],
            "torch.frombuffer": torch.frombuffer(buf, dtype=torch.uint8),
        }
        copies = {
            "bytes": bytes(buf),
            "bytearray": bytearray(buf),
            "bytearray slice": buf[:4],
            "numpy.array": np.array(memoryview(buf)),
            ".copy()": np.frombuffer(buf, dtype=np.uint8).copy(),
            ".clone()": torch.frombuffer(buf, dtype=torch.uint8).clone(),
        }
        equal = np.array([memoryview(buf)[:4], memoryview(buf)[4:]], dtype=object)  # not ragged: the values
        assert equal.shape == (2, 4) and type(equal[0, 0]) is int
        fill()
        for name, view in views.items():
            assert bytes(memoryview(np.asarray(view)))[:1] == b"B", name
        for name, copy in copies.items():
            assert bytes(memoryview(np.asarray(copy)))[:1] == b"A", name
    finally:
        os.close(fd)


def test_the_refilling_entries_name_where_the_buffer_is() -> None:
    """Each shipped refill names the buffer's position as the real call takes it: the first
    argument of the socket and file methods, the list of buffers second for `os.preadv` and
    `os.readv` (the file descriptor is first)."""
    refills = {str(p): spec.writes for spec in builtin_vocabulary().host_writes if spec.refills for p in spec.calls}
    assert refills == {
        ".readinto": 0, ".readinto1": 0, ".recv_into": 0, ".recvfrom_into": 0, ".recvmsg_into": 0,
        "os.preadv": 1, "os.readv": 1,
    }
    for method in ("recv_into", "recvfrom_into", "recvmsg_into"):
        assert callable(getattr(socket.socket, method))
    assert callable(io.RawIOBase.readinto) and callable(io.BufferedIOBase.readinto1)
    assert os.readv.__name__ == "readv" and os.preadv.__name__ == "preadv"


def test_refills_must_be_a_boolean() -> None:
    with pytest.raises(PackError, match="'refills' must be true or false"):
        vocabulary_from_dict({"host-writes": [{"call": ".recv_into", "writes": 0, "refills": "yes"}]}, "pack.toml")


def _findings(tmp_path: Path):
    root = tmp_path / "recv_into"
    shutil.copytree(FIXTURE, root)
    files = sorted(root.rglob("*.py"))
    vocab = load_settings(root).vocab
    result = render(analyze_project(root, files, files, vocab), vocab)
    return root, vocab, {(f.path.name, f.span.line): f for f in result.findings}


def test_the_copy_offered_is_the_one_of_the_view_handed_over(tmp_path: Path) -> None:
    """The refilled buffer is a bytearray (the `memoryview` kind: `bytes(...)`), but what is
    handed over is a view of some kind: its own copy keeps it what it is (`made-by`)."""
    root, vocab, found = _findings(tmp_path)
    source = (root / "framing" / "reader.py").read_text().splitlines()

    def copy_at(text: str) -> str:
        line = next(i for i, row in enumerate(source, 1) if text in row and "expect: BL001" in row)
        kind = kind_for(found[("reader.py", line)], vocab)
        assert kind is not None
        return kind.copy_of("value")

    assert copy_at("np.frombuffer(buf, dtype=np.uint8))") == "value.copy()"
    assert copy_at("pool.submit(handle, memoryview(buf))") == "bytes(value)"
    assert copy_at("torch.frombuffer(buf, dtype=torch.uint8)") == "value.clone()"


def test_a_refill_finding_traces_the_buffer_from_its_refill_to_the_next(tmp_path: Path) -> None:
    root, _, found = _findings(tmp_path)
    finding = found[("reader.py", 15)]
    notes = [step.note for step in finding.trace]
    assert notes[0] == "`sock.recv_into(...)` reads into `buf` in place: its views are borrowed until it is refilled"
    assert notes[-1] == "`sock.recv_into(...)` refills `buf` with the next records"
    assert "copy it (`value.copy()`)" in finding.message
    kept = found[("connection.py", 30)]
    assert kept.rule == "BL003"
    assert kept.trace[-1].note == "`framing.connection:Connection.remember` returns: its next call refills `self._buf`"
