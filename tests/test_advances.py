"""Producers that advance by a call (a pack source's ``advances``) and attributes that are
views of a reused buffer (a source's ``attribute``): the fixtures in tests/fixtures/advances,
analysed with a project pack declaring both, report exactly their ``# expect:`` lines."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bufferlint.analysis import analyze_project
from bufferlint.packs import PackError, builtin_vocabulary, vocabulary_from_dict
from test_analysis_fixtures import annotated

FIXTURES = Path(__file__).parent / "fixtures" / "advances"

PACK = {
    "sources": [
        {"call": ["ringbuf.Ring.read"], "advances": ["ringbuf.Ring.release", ".send_ack"]},
        {"call": ["ringbuf.Packer.pack"], "kind": "memoryview", "advances": ["ringbuf.Packer.pack"]},
        {
            "attribute": ["multiprocessing.shared_memory.SharedMemory.buf"],
            "kind": "memoryview",
            "advances": [".send_ack"],
        },
    ]
}


def vocabulary():
    vocab = builtin_vocabulary()
    vocab.merge(vocabulary_from_dict(PACK, "pyproject.toml"))
    return vocab


def test_reported_exactly_on_the_expected_lines(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(FIXTURES, root)
    files = sorted(root.rglob("*.py"))
    result = analyze_project(root, files, files, vocabulary())
    assert result.errors == []
    found = sorted(f"{f.path.relative_to(root).as_posix()}:{f.span.line}: {f.rule}" for f in result.findings)
    assert found == annotated(root)
    shm = next(f for f in result.findings if f.path.name == "shm_bucket.py")
    assert [step.line for step in shm.trace] == [11, 11, 12, 13]  # source, view, acknowledgement, read
    assert "send_ack" in shm.trace[2].note


def test_a_read_after_the_advance_is_worded_as_one_and_a_kept_list_is_reported_where_it_escaped(tmp_path: Path) -> None:
    """One report per bug, in words that fit: a view read after the release is "read by",
    not "kept in"; a list of views read after the release is reported at the append, and
    the release and the read are steps of its trace."""
    from bufferlint.catalog.words import render

    root = tmp_path / "project"
    shutil.copytree(FIXTURES, root)
    files = sorted(root.rglob("*.py"))
    vocab = vocabulary()
    result = render(analyze_project(root, files, files, vocab), vocab)
    ring = {f.function.rpartition(":")[2]: f for f in result.findings if f.path.name == "ring_app.py"}
    read = ring["read_after_release"]
    assert read.message.startswith("borrowed buffer view is read by `consume(...)` after its producer may have refilled")
    assert "(after" not in read.message and read.trace[-1].note.startswith("read by `consume(...)`")
    listed = ring["listed_then_read_after_release"]
    assert "kept in `views`" in listed.message
    assert [step.line for step in listed.trace][-3:] == [listed.span.line, listed.span.line + 1, listed.span.line + 2]
    assert "ring.release" in listed.trace[-2].note and "read by `consume(...)`" in listed.trace[-1].note
    kept = ring["kept_by_the_caller_then_read"]
    assert "read by `consume(...)`" in kept.trace[-1].note


def test_without_the_pack_nothing_is_borrowed(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(FIXTURES, root)
    files = sorted(root.rglob("*.py"))
    assert analyze_project(root, files, files, builtin_vocabulary()).findings == []


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"attribute": [".buf"]}, "expected 'pkg.Class.attr' names"),
        ({"call": ["a.f"], "advances": 3}, "advances: expected a call pattern"),
        ({"call": ["a.f"], "until": "later"}, "'until' must be"),
    ],
)
def test_bad_source_tables(table: dict, message: str) -> None:
    with pytest.raises(PackError, match=message):
        vocabulary_from_dict({"sources": [table]}, "pack.toml")
