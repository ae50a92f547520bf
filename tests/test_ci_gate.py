"""CI cannot go green while a test skips that is not on ``allowed_skips``, and no skip anywhere
goes without a reason: the gate in ``conftest.py``, exercised on a throwaway test directory with
a real inner pytest run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO

SKIPPING = {
    "test_module_skip.py": 'import pytest\n\npytest.importorskip("no_such_module_for_bufferlint")\n\n\ndef test_a():\n    pass\n',
    "test_bare_skip.py": "import pytest\n\n\n@pytest.mark.skip\ndef test_bare():\n    pass\n",
    "test_marked_skip.py": (
        "import pytest\n\n\n"
        "@pytest.mark.network\n"
        "def test_real():\n"
        '    pytest.skip("no network")\n\n\n'
        "def test_unmarked():\n"
        '    pytest.skip("fine anywhere")\n\n\n'
        "def test_allowed():\n"
        '    pytest.skip("a platform without the feature")\n\n\n'
        "def test_needs_a_package():\n"
        '    pytest.importorskip("no_such_module_for_bufferlint")\n'
    ),
}


def inner_pytest(tmp_path: Path, strict: bool, *names: str) -> subprocess.CompletedProcess:
    for name, text in SKIPPING.items():
        (tmp_path / name).write_text(text)
    shutil.copy(REPO / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    network: n\n    runtime: r\n"
        "allowed_skips =\n    test_marked_skip.py::test_allowed = only where the feature exists\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUFFERLINT_STRICT_SKIPS")}
    if strict:
        env["BUFFERLINT_STRICT_SKIPS"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *names],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_skip_not_on_the_allowed_list_fails_in_ci(tmp_path: Path) -> None:
    run = inner_pytest(tmp_path, True, "test_marked_skip.py")
    assert run.returncode == 1, run.stdout
    assert "real-world test skipped in CI, where it must run: Skipped: no network" in run.stdout
    assert "test needing a package skipped in CI, where it must run: Skipped: could not import" in run.stdout
    assert "test not on allowed_skips skipped in CI, where it must run: Skipped: fine anywhere" in run.stdout
    assert "3 failed, 1 skipped" in run.stdout  # test_allowed is on the list
    assert "SKIPPED [1] test_marked_skip.py:" in run.stdout and "a platform without the feature" in run.stdout


def test_a_test_module_skipped_at_import_fails_in_ci(tmp_path: Path) -> None:
    run = inner_pytest(tmp_path, True, "test_module_skip.py")
    assert run.returncode != 0, run.stdout
    assert "test module skipped in CI, where it must run: Skipped: could not import 'no_such_module_for_bufferlint'" in run.stdout


def test_a_skip_without_a_reason_fails_everywhere(tmp_path: Path) -> None:
    for strict in (True, False):
        run = inner_pytest(tmp_path, strict, "test_bare_skip.py")
        assert run.returncode == 1, run.stdout
        assert "a skip must say why" in run.stdout


def test_they_only_skip_elsewhere(tmp_path: Path) -> None:
    run = inner_pytest(tmp_path, False, "test_module_skip.py", "test_marked_skip.py")
    assert run.returncode == 0, run.stdout
    assert "5 skipped" in run.stdout
