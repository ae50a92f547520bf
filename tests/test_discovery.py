import os
from pathlib import Path

import pytest

from bufferlint.config import DEFAULT_EXCLUDE, Settings, load_settings
from bufferlint.discovery import discover, expand_paths, find_project_root
from bufferlint.globs import exclude_matcher
from bufferlint.findings import FileError
from bufferlint.packs import Vocabulary
from conftest import write


def rel(paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def test_project_root_is_nearest_pyproject(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "", "svc/pyproject.toml": "", "svc/pkg/a.py": "", "svc/pkg/sub/b.py": ""})
    assert find_project_root([tmp_path / "svc/pkg/a.py"]) == tmp_path / "svc"
    assert find_project_root([tmp_path / "svc/pkg/a.py", tmp_path / "svc/pkg/sub"]) == tmp_path / "svc"


def test_project_root_from_common_parent_of_several_projects(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "", "a/pyproject.toml": "", "a/x.py": "", "b/y.py": ""})
    assert find_project_root([tmp_path / "a/x.py", tmp_path / "b/y.py"]) == tmp_path


def test_project_root_without_pyproject_is_common_root(tmp_path: Path) -> None:
    # tmp_path lives under /tmp, which has no pyproject.toml above it
    write(tmp_path, {"src/a/x.py": "", "src/b/y.py": ""})
    assert find_project_root([tmp_path / "src/a/x.py", tmp_path / "src/b/y.py"]) == tmp_path / "src"
    assert find_project_root([tmp_path / "src/a/x.py"]) == tmp_path / "src/a"


def test_project_root_of_relative_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"pyproject.toml": "", "pkg/a.py": ""})
    monkeypatch.chdir(tmp_path / "pkg")
    assert find_project_root([Path("a.py")]) == tmp_path


LAYOUT = {
    "pkg/__init__.py": "",
    "pkg/core.py": "",
    "pkg/stubs.pyi": "",
    "pkg/notes.txt": "",
    "pkg/msg_pb2.py": "",
    "pkg/build/gen.py": "",
    "build/lib/pkg/core.py": "",
    ".venv/lib/site.py": "",
    "pkg/__pycache__/core.py": "",
    "thing.egg-info/x.py": "",
    "tests/fixtures/case.py": "",
    "tests/test_core.py": "",
    "docs/fixtures/example.py": "",
}


def test_default_excludes(tmp_path: Path) -> None:
    write(tmp_path, LAYOUT)
    assert rel(discover(tmp_path, DEFAULT_EXCLUDE), tmp_path) == [
        "docs/fixtures/example.py",
        "pkg/__init__.py",
        "pkg/core.py",
        "pkg/msg_pb2.py",
        "pkg/stubs.pyi",
        "tests/fixtures/case.py",
        "tests/test_core.py",
    ]


def test_path_and_name_patterns(tmp_path: Path) -> None:
    write(tmp_path, LAYOUT)
    found = rel(discover(tmp_path, DEFAULT_EXCLUDE + ("tests/fixtures", "*_pb2.py")), tmp_path)
    assert "tests/fixtures/case.py" not in found  # relative path pattern: only that directory
    assert "docs/fixtures/example.py" in found
    assert "pkg/msg_pb2.py" not in found  # name pattern: anywhere
    assert "pkg/core.py" in found


def test_exclude_replaces_defaults(tmp_path: Path) -> None:
    write(tmp_path, LAYOUT)
    found = rel(discover(tmp_path, ("tests",)), tmp_path)
    assert "build/lib/pkg/core.py" in found and ".venv/lib/site.py" in found
    assert not any(p.startswith("tests/") for p in found)


@pytest.mark.parametrize(
    ("pattern", "path", "excluded"),
    [
        ("build", "pkg/build", True),
        ("build/", "pkg/build", True),
        ("./pkg/build", "pkg/build", True),
        ("**/build", "pkg/build", True),
        ("**/pkg", "pkg", True),
        ("pkg/*", "pkg/build", True),
        ("bui*", "pkg/build", True),
        ("gen.py", "pkg/build/gen.py", True),
        ("Build", "pkg/build", False),  # case-sensitive, as in Ruff
        ("uild", "pkg/build", False),
        ("other/build", "pkg/build", False),
        ("build", "pkg/build/gen.py", False),  # parents are pruned by discover(), not matched here
        ("*.py", "pkg/build/gen.py", True),
        ("gen.py", "gen.pyi", False),
    ],
)
def test_exclude_patterns(pattern: str, path: str, excluded: bool) -> None:
    assert exclude_matcher([pattern])(path) is excluded


def test_no_patterns_exclude_nothing() -> None:
    assert exclude_matcher([])("build") is False


def test_symlinked_directories_are_not_followed(tmp_path: Path) -> None:
    write(tmp_path, {"pkg/a.py": ""})
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    assert rel(discover(tmp_path, ()), tmp_path) == ["pkg/a.py"]


def settings(root: Path) -> Settings:
    return Settings(vocab=Vocabulary(), root=root)


def test_expand_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, LAYOUT)
    monkeypatch.chdir(tmp_path)
    files, errors = expand_paths([Path("pkg"), Path("tests/test_core.py"), Path("pkg/core.py")], tmp_path, settings(tmp_path))
    assert errors == []
    assert rel(files, tmp_path) == ["pkg/__init__.py", "pkg/core.py", "pkg/msg_pb2.py", "pkg/stubs.pyi", "tests/test_core.py"]
    assert all(p.is_absolute() for p in files)


def test_named_files_are_taken_even_if_excluded_or_without_suffix(tmp_path: Path) -> None:
    write(tmp_path, {"build/gen.py": "", "bin/tool": "#!/usr/bin/env python\n"})
    files, errors = expand_paths([tmp_path / "build/gen.py", tmp_path / "bin/tool"], tmp_path, settings(tmp_path))
    assert (rel(files, tmp_path), errors) == (["bin/tool", "build/gen.py"], [])


def test_named_directory_is_walked_with_project_excludes(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[tool.bufferlint]\nextend-exclude = ["pkg/gen"]\n', "pkg/a.py": "", "pkg/gen/b.py": ""})
    files, _ = expand_paths([tmp_path / "pkg"], tmp_path, load_settings(tmp_path))
    assert rel(files, tmp_path) == ["pkg/a.py"]


def test_missing_path_is_an_error_and_the_rest_still_expands(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": ""})
    files, errors = expand_paths([tmp_path / "nope.py", tmp_path / "a.py"], tmp_path, settings(tmp_path))
    assert files == [tmp_path / "a.py"]
    assert errors == [FileError(tmp_path / "nope.py", "no such file or directory")]


def test_broken_symlink_is_kept_for_the_reader_to_report(tmp_path: Path) -> None:
    (tmp_path / "dangling.py").symlink_to(tmp_path / "gone.py")
    files, errors = expand_paths([tmp_path / "dangling.py"], tmp_path, settings(tmp_path))
    assert (files, errors) == ([tmp_path / "dangling.py"], [])


def test_unlistable_directory_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests run as root, where chmod 000 does not stop listing; make scandir fail instead.
    write(tmp_path, {"a.py": "", "locked/b.py": ""})
    real_scandir = os.scandir

    def scandir(path):
        if Path(path) == tmp_path / "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    files, errors = expand_paths([tmp_path], tmp_path, settings(tmp_path))
    assert files == [tmp_path / "a.py"]
    assert errors == [FileError(tmp_path / "locked", "cannot list directory: Permission denied")]
