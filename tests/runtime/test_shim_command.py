"""`bufferlint shim` end to end: analyse a fixture package, write the shim, import it, and
show with the race harness that the flagged loader no longer corrupts weights."""

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent / "fixtures" / "bl_shim_e2e"


def test_shim_patches_exactly_the_flagged_loader_and_makes_it_safe(tmp_path, fixture_pkg, monkeypatch):
    pytest.importorskip("torch")
    from bufferlint import runtime as rt
    from bufferlint.testing import RaceHarness

    shim = tmp_path / "bl_shim_e2e_startup.py"
    proc = subprocess.run(
        [sys.executable, "-m", "bufferlint", "shim", str(PACKAGE), "--project-root", str(PACKAGE.parent), "-o", str(shim)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "patches 1 loader with policy 'sync'" in proc.stderr
    text = shim.read_text()
    assert "'bl_shim_e2e.loader:Model.load_weights'," in text
    # the finding it answers, just above the target
    # (nothing in the fixture declares the streamer's version: the condition comes first)
    assert ("# BL001 bl_shim_e2e/loader.py:21:28 with runai-model-streamer<0.17 only (nothing declares "
            "runai-model-streamer, raise the floor: `runai-model-streamer>=0.17`): borrowed buffer view reaches "
            "async sink `executor.submit`") in text

    from bl_shim_e2e.loader import Model

    names = [f"w{i}" for i in range(8)]
    unsafe = RaceHarness()
    control = Model(names, 256).load_weights(unsafe.weights(8, (256,)), unsafe.executor)
    assert unsafe.corrupted(control.params), "control: without the shim the worker reads overwritten buffers"
    unsafe.close()

    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module(shim.stem)  # what an operator does at start-up (the loader is already imported)
    assert rt.patched() == {"bl_shim_e2e.loader:Model.load_weights": "sync"}
    safe = RaceHarness()
    model = Model(names, 256).load_weights(safe.weights(8, (256,)), safe.executor)
    safe.assert_intact(model.params)
    safe.close()


def test_function_without_an_importable_name_exits_2_and_the_others_are_written(tmp_path):
    """A loader in `my-scripts/` (not an identifier) cannot be patched by name: reported, left
    out of the shim with a NOT PATCHED line, exit 2; the importable loader is still written."""
    source = (PACKAGE / "loader.py").read_text()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "loader.py").write_text(source)
    (tmp_path / "my-scripts").mkdir()
    (tmp_path / "my-scripts" / "load.py").write_text(source)
    shim = tmp_path / "shim.py"
    proc = subprocess.run(
        [sys.executable, "-m", "bufferlint", "shim", str(tmp_path / "pkg"), str(tmp_path / "my-scripts"), "-o", str(shim)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert (
        "bufferlint: error: cannot patch my-scripts.load:Model.load_weights: 'my-scripts' in my-scripts/load.py "
        "is not a Python identifier, so it cannot be imported; not in the shim"
    ) in proc.stderr
    text = shim.read_text()
    assert "    'pkg.loader:Model.load_weights',\n]" in text
    assert "# NOT PATCHED my-scripts.load:Model.load_weights:" in text


def test_a_loader_a_guards_finding_stands_for_is_patched(tmp_path):
    """One finding per bug is for reading: the example's loader call is a step of the broken
    guard's BL002, not a BL001 of its own, yet it runs through that guard and must be patched
    (sglang 0.5.16's real loader corrupted 7 tensors under a shim that left such calls out)."""
    example = tmp_path / "runai_loader"
    shutil.copytree(Path(__file__).parents[2] / "examples" / "runai_loader", example)
    report = subprocess.run([sys.executable, "-m", "bufferlint", "check", "."], cwd=example, capture_output=True, text=True)
    assert "BL002" in report.stdout and "BL001" not in report.stdout, report.stdout  # the guard stands for it
    proc = subprocess.run([sys.executable, "-m", "bufferlint", "shim", ".", "-o", str(tmp_path / "example_shim.py")],
                          cwd=example, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "'streamloader.models:TinyModel.load_weights'," in (tmp_path / "example_shim.py").read_text()
