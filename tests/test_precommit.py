"""The pre-commit hooks, for real: the actual ``pre-commit`` (from PyPI) runs
``pre-commit try-repo`` against a copy of this checkout, which pip-installs bufferlint
into pre-commit's own virtualenv exactly as a user's ``.pre-commit-config.yaml`` would.

Needs the package index (pre-commit, hatchling, libcst): marked ``network``, deselect
offline with ``-m "not network"``. CI runs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import REPO, write
from test_formats import GUARD, GUARD_PATH, LOADER

pytestmark = [pytest.mark.network]

TIMEOUT = 900  # the first hook run builds bufferlint and its virtualenv
GIT = ["git", "-c", "user.name=bufferlint tests", "-c", "user.email=tests@bufferlint.invalid", "-c", "commit.gpgsign=false",
       "-c", "init.defaultBranch=main"]


@pytest.fixture(scope="session")
def pre_commit(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The real pre-commit: the one installed with the ``dev`` extra, else a fresh one from PyPI."""
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        env = tmp_path_factory.mktemp("pre-commit-venv")
        venv.create(env, with_pip=True)
        python = env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        subprocess.run([python, "-m", "pip", "install", "--quiet", "pre-commit>=3"], check=True, timeout=TIMEOUT)
        return [str(python), "-m", "pre_commit"]
    return [sys.executable, "-m", "pre_commit"]


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's working tree (committed or not) as a one-commit git repository, the
    form ``try-repo`` clones from; untracked-but-not-ignored files are included, so the
    hooks under test are the ones on disk."""
    repo = tmp_path_factory.mktemp("hook-repo")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=False)
    if listed.returncode == 0:
        for name in filter(None, listed.stdout.decode().split("\0")):
            source = REPO / name
            if source.is_file():
                (repo / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, repo / name)
    else:  # not a git checkout (an sdist): copy what the package build needs
        for name in ("bufferlint", "rules"):
            shutil.copytree(REPO / name, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
            shutil.copy2(REPO / name, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "bufferlint under test")
    return repo


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pre-commit's cache, shared by the tests so bufferlint's hook env is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def git(cwd: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def target_repo(root: Path, files: dict[str, str]) -> Path:
    write(root, {"pyproject.toml": "[project]\nname = 'demo'\n", **files})
    git(root, "init", "-q")
    git(root, "add", "-A")
    return root


def try_repo(pre_commit: list[str], home: Path, hook_repo: Path, target: Path, hook: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never", "NO_COLOR": "1"}
    for name in ("PYTHONPATH", "BUFFERLINT_DEBUG", "PRE_COMMIT_ALLOW_NO_CONFIG", "SKIP"):
        env.pop(name, None)  # the hook must run the bufferlint pre-commit installed, not this checkout
    return subprocess.run(
        [*pre_commit, "try-repo", str(hook_repo), hook, "--all-files", "--verbose"],
        cwd=target, env=env, capture_output=True, text=True, timeout=TIMEOUT,
    )


def test_check_hook_fails_and_names_the_finding(pre_commit, pre_commit_home, hook_repo, tmp_path: Path) -> None:
    target = target_repo(tmp_path, {"loader.py": LOADER, "clean.py": "def f():\n    return 1\n"})
    proc = try_repo(pre_commit, pre_commit_home, hook_repo, target, "bufferlint")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert "bufferlint" in output and "Failed" in output
    assert "loader.py:13:13: BL001 " in output
    assert "Found 1 finding (1 BL001) in 2 files." in output

    (target / "loader.py").write_text(LOADER.replace("executor.submit(fn, w)", "executor.submit(fn, w.clone())"))
    proc = try_repo(pre_commit, pre_commit_home, hook_repo, target, "bufferlint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout


def test_fix_hook_rewrites_once_then_passes(pre_commit, pre_commit_home, hook_repo, tmp_path: Path) -> None:
    target = target_repo(tmp_path, {GUARD_PATH: GUARD})
    proc = try_repo(pre_commit, pre_commit_home, hook_repo, target, "bufferlint-fix")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert "files were modified by this hook" in output
    fixed = (target / GUARD_PATH).read_text(encoding="utf-8")
    assert fixed != GUARD and "_sglang_runai_streamer_tensor" in fixed

    proc = try_repo(pre_commit, pre_commit_home, hook_repo, target, "bufferlint-fix")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (target / GUARD_PATH).read_text(encoding="utf-8") == fixed
    proc = try_repo(pre_commit, pre_commit_home, hook_repo, target, "bufferlint")  # and the check agrees
    assert proc.returncode == 0, proc.stdout + proc.stderr
