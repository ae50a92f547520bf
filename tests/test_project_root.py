"""Which project a run analyses: the nearest packaging file, else the git work tree, else the
current directory when the paths lie below it, else their common parent; ``--project-root``
overrides; ``-v`` says which and why. The root must never silently shrink to the reported
files' own directory (the project's sources elsewhere would be missed: a clean run that is
wrong)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bufferlint.discovery import ROOT_MARKERS, ProjectRoot, locate_project_root
from conftest import REPO, run_cli, write


@pytest.mark.parametrize("marker", ROOT_MARKERS)
def test_nearest_packaging_file(tmp_path: Path, marker: str) -> None:
    write(tmp_path, {"pyproject.toml": "", f"svc/{marker}": "", "svc/pkg/a.py": "", "svc/pkg/sub/b.py": ""})
    found = locate_project_root([tmp_path / "svc/pkg/a.py", tmp_path / "svc/pkg/sub"], cwd=tmp_path)
    assert found == ProjectRoot(tmp_path / "svc", f"nearest {marker}")


def test_git_work_tree_without_packaging_files(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    write(tmp_path, {"repo/pkg/models/one.py": "", "repo/pkg/loader/io.py": ""})
    found = locate_project_root([tmp_path / "repo/pkg/models/one.py"], cwd=tmp_path)
    assert found == ProjectRoot(tmp_path / "repo", "enclosing git work tree")
    # a packaging file inside the work tree is nearer: it wins
    write(tmp_path, {"repo/pkg/setup.py": ""})
    assert locate_project_root([tmp_path / "repo/pkg/models/one.py"]).path == tmp_path / "repo/pkg"


def test_git_worktree_or_submodule_has_a_git_file(tmp_path: Path) -> None:
    write(tmp_path, {"wt/.git": "gitdir: /elsewhere/.git/worktrees/wt\n", "wt/pkg/a.py": ""})
    assert locate_project_root([tmp_path / "wt/pkg/a.py"], cwd=tmp_path) == ProjectRoot(tmp_path / "wt", "enclosing git work tree")


def test_current_directory_when_the_paths_lie_below_it(tmp_path: Path) -> None:
    # tmp_path lives under /tmp: no packaging file or git work tree above it
    write(tmp_path, {"pkg/models/one.py": "", "pkg/loader/io.py": ""})
    found = locate_project_root([tmp_path / "pkg/models/one.py"], cwd=tmp_path)
    assert found == ProjectRoot(tmp_path, "current directory")
    assert locate_project_root([tmp_path], cwd=tmp_path).path == tmp_path


def test_common_parent_of_paths_outside_the_current_directory(tmp_path: Path) -> None:
    write(tmp_path, {"src/a/x.py": "", "src/b/y.py": "", "elsewhere/z.py": ""})
    paths = [tmp_path / "src/a/x.py", tmp_path / "src/b/y.py"]
    assert locate_project_root(paths, cwd=tmp_path / "elsewhere") == ProjectRoot(tmp_path / "src", "common parent of the paths")


STREAMLOADER = REPO / "examples/runai_loader/streamloader"


def checkout(top: Path) -> None:
    """The example loader split the way the issue describes: the model in ``pkg/models/``,
    the streamed source in ``pkg/loader/``, and no pyproject.toml anywhere."""
    rename = {"streamloader.weights": "pkg.loader.weights", "streamloader.executor_utils": "pkg.models.executor_utils"}

    def text(name: str) -> str:
        content = (STREAMLOADER / name).read_text()
        for old, new in rename.items():
            content = content.replace(old, new)
        return content

    write(top, {
        "pkg/__init__.py": "",
        "pkg/loader/__init__.py": "",
        "pkg/loader/weights.py": text("weights.py"),
        "pkg/loader/loader.py": text("loader.py"),
        "pkg/models/__init__.py": "",
        "pkg/models/executor_utils.py": text("executor_utils.py"),
        "pkg/models/one.py": text("models.py"),
    })


@pytest.mark.parametrize("git", [False, True], ids=["plain directory", "git checkout"])
def test_one_model_file_from_the_top_of_a_checkout_sees_the_loader(tmp_path: Path, git: bool) -> None:
    checkout(tmp_path)
    if git:
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = run_cli("check", "--no-color", "-v", "pkg/models/one.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("pkg/models/one.py:15:17: BL001 ")
    assert "pkg/loader/weights.py:10: `streamer.get_tensors(...)`" in done.stdout
    reason = "enclosing git work tree" if git else "current directory"
    assert f"bufferlint: project root {tmp_path} ({reason}); 7 files analysed, " in done.stderr
    assert ", 1 reported on; cache: analysed, saved\n" in done.stderr
    again = run_cli("check", "--no-color", "-v", "pkg/models/one.py", cwd=tmp_path)
    assert again.stdout == done.stdout
    assert ", 1 reported on; cache: the last analysis reused\n" in again.stderr


def test_project_root_option_overrides_and_is_reported(tmp_path: Path) -> None:
    checkout(tmp_path)
    done = run_cli("check", "--no-color", "-v", "--project-root", "pkg/models", "pkg/models/one.py", cwd=tmp_path)
    # the option is obeyed even though it hides the source: it is what the user asked for
    assert done.returncode == 0, done.stderr
    assert f"bufferlint: project root {tmp_path / 'pkg/models'} (--project-root); 3 files analysed, " in done.stderr


def test_no_verbose_line_without_the_flag(tmp_path: Path) -> None:
    checkout(tmp_path)
    done = run_cli("check", "pkg/models/one.py", cwd=tmp_path)
    assert "project root" not in done.stderr and done.returncode == 1
