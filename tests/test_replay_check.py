"""``benchmarks/replay_check.py``'s small form: edits inside the functions a cold run of a
fixture project interpreted, each checked warm (the replay decides) against ``--no-cache``.
The long form runs on a real tree by hand (docs/benchmarks.md)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import REPO


@pytest.mark.parametrize("edit", ["add", "pass"])
def test_replayed_edits_give_what_cold_runs_give(edit: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "replay_check.py"), str(REPO / "tests" / "fixtures" / "analysis" / "cross_module"),
         "--functions", "4", "--edit", edit, "--seed", "3"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )
    summary = re.search(r"(\d+) functions edited: (\d+) replayed, (\d+) analysed again, (\d+) warm runs differing", proc.stdout)
    assert summary is not None, proc.stdout + proc.stderr
    edited, replayed, _, differing = map(int, summary.groups())
    assert proc.returncode == 0 and differing == 0, proc.stdout
    assert edited == 4
    if edit == "add":  # a statement that changes nothing but lines is replayed, not analysed again
        assert replayed >= 1, proc.stdout
