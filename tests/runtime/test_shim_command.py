"""`bufferlint shim` end to end: analyse a fixture package, write the shim, import it, and
show with the race harness that the flagged loader no longer corrupts weights."""

import importlib
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
    assert "# BL001 bl_shim_e2e/loader.py:21:28 borrowed buffer view reaches async sink `executor.submit`" in text

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
