"""Writes are honest: a fix that could not be written is not counted as fixed (summary and
exit code), hard links and file modes survive a rewrite, and a read-only file is never
replaced behind the user's back."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from bufferlint.atomic import ReadOnlyError, write_atomic
from conftest import run_cli
from test_formats import GUARD_PATH, real_project

FIXED_GUARD = '    if getattr(weight, "_sglang_runai_streamer_tensor", False):'


def test_write_atomic_refuses_a_read_only_file(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")
    path.chmod(0o444)
    with pytest.raises(ReadOnlyError, match=r"read-only \(mode 0444\): not rewritten"):
        write_atomic(path, b"x = 2\n")
    assert path.read_bytes() == b"x = 1\n" and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


def test_write_atomic_writes_through_hard_links(tmp_path: Path) -> None:
    path, other = tmp_path / "m.py", tmp_path / "link.py"
    path.write_bytes(b"x = 1\n")
    path.chmod(0o640)
    os.link(path, other)
    write_atomic(path, b"x = 22\n")
    assert other.read_bytes() == path.read_bytes() == b"x = 22\n"
    assert os.path.samefile(path, other) and path.stat().st_nlink == 2
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    write_atomic(other, b"y\n")  # shorter: the rest is truncated
    assert path.read_bytes() == b"y\n"


def test_fix_that_cannot_be_written_is_not_counted(tmp_path: Path) -> None:
    real_project(tmp_path)
    guard = tmp_path / GUARD_PATH
    before = guard.read_bytes()
    guard.chmod(0o444)
    proc = run_cli("check", "--fix", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{GUARD_PATH}: error: cannot write the fixed file: the file is read-only (mode 0444)" in proc.stdout
    # the loader's call, wrapped in the guard (written), is now the unwritten guard's: a step of
    # its BL002 (one finding per bug), present and not fixed
    assert proc.stderr.endswith("Fixed 0 findings (1 remaining). 1 fixed file could not be written.\n"), proc.stderr
    assert "loader.py:15: `executor.submit` here consumes the borrowed values" in proc.stdout
    assert guard.read_bytes() == before and stat.S_IMODE(guard.stat().st_mode) == 0o444

    guard.chmod(0o644)
    proc = run_cli("check", "--fix", "--format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr.endswith("Fixed 1 finding (0 remaining).\n"), proc.stderr
    assert json.loads(proc.stdout)["findings"] == []
    assert FIXED_GUARD in guard.read_text() and stat.S_IMODE(guard.stat().st_mode) == 0o644


def test_fix_of_a_hard_linked_file_reaches_every_link(tmp_path: Path) -> None:
    real_project(tmp_path)
    guard = tmp_path / GUARD_PATH
    os.link(guard, tmp_path / "guard-copy.txt")
    assert run_cli("check", "--fix", ".", cwd=tmp_path).returncode == 0
    assert FIXED_GUARD in (tmp_path / "guard-copy.txt").read_text()
    assert os.path.samefile(guard, tmp_path / "guard-copy.txt")


def test_baseline_over_a_read_only_file_is_an_error(tmp_path: Path) -> None:
    real_project(tmp_path)
    (tmp_path / "baseline.json").write_text("{}")
    (tmp_path / "baseline.json").chmod(0o444)
    proc = run_cli("check", "--write-baseline", "baseline.json", ".", cwd=tmp_path)
    assert proc.returncode == 2 and "baseline.json: cannot write: the file is read-only" in proc.stderr
    assert (tmp_path / "baseline.json").read_text() == "{}"
