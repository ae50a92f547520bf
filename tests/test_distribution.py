"""The wheel a user installs: built from this checkout by pip, as ``pip install .`` does."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from conftest import REPO


@pytest.mark.network  # pip fetches the build backend (hatchling) from the package index
def test_the_wheel_carries_the_licence_the_hook_and_the_packs(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
                    str(REPO), "-w", str(tmp_path)], check=True, timeout=600, capture_output=True)
    (wheel,) = tmp_path.glob("bufferlint-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(f"{dist_info}/METADATA").decode())
        licence = archive.read(f"{dist_info}/licenses/LICENSE")
    assert licence == (REPO / "LICENSE").read_bytes()
    assert b"Apache License\n                           Version 2.0, January 2004" in licence
    assert metadata["License"] == "Apache-2.0" and metadata["License-File"] == "LICENSE"
    assert "bufferlint-runtime.pth" in names  # the start-up hook, at the top of site-packages
    assert {p.name for p in (REPO / "rules").glob("*.toml")} <= {Path(n).name for n in names if n.startswith("bufferlint/_packs/")}
