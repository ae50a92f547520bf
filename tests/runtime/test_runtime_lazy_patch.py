"""Lazy per-target patching: ``patch`` never imports the modules it names, installs each target
when its module is imported, and one unresolvable target does not stop the others."""

import importlib
import os
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
from bufferlint import runtime as rt  # noqa: E402
from bufferlint.runtime import imports  # noqa: E402
from bufferlint.testing import RaceHarness  # noqa: E402

from .conftest import FIXTURES  # noqa: E402

MODULE = "bl_fixture_loaders.loader"
LOADER = f"{MODULE}:Model.load_weights"
NAMES = [f"w{i}" for i in range(8)]


def corrupted_after_load(model_cls):
    race = RaceHarness()
    try:
        model = model_cls(NAMES, 256).load_weights(race.weights(8, (256,)), race.executor)
        return race.corrupted(model.params)
    finally:
        race.close()


def states():
    return {s.target: (s.state, s.reason) for s in rt.status()}


def test_patch_waits_for_the_import_and_installs_before_the_importer_continues(fixture_pkg):
    assert MODULE not in sys.modules
    assert rt.patch(LOADER) == [LOADER]
    assert MODULE not in sys.modules, "patch() must not import the model module"
    assert states() == {LOADER: ("pending", "")} and rt.patched() == {}
    from bl_fixture_loaders.loader import Model  # the application's own import

    assert states() == {LOADER: ("installed", "")}
    assert corrupted_after_load(Model) == []
    # the module keeps its real loader (inspect, importlib.resources, ... see no wrapper)
    assert type(sys.modules[MODULE].__loader__).__name__ == "SourceFileLoader"
    rt.unpatch()
    assert len(corrupted_after_load(Model)) == 8


def test_unresolvable_target_is_a_warning_and_the_others_are_protected(fixture_pkg):
    missing = f"{MODULE}:Model.load_weights_v2"  # a method this release does not have
    never = "no_such_model_pkg.loader:Model.load_weights"  # a model module never imported here
    rt.patch(missing, LOADER, never)
    with pytest.warns(rt.PatchWarning, match=r"cannot patch 'bl_fixture_loaders.loader:Model.load_weights_v2'.*has no attribute 'load_weights_v2'"):
        from bl_fixture_loaders.loader import Model
    assert states() == {
        missing: ("failed", f"cannot patch {missing!r}: 'bl_fixture_loaders.loader:Model' has no attribute 'load_weights_v2'"),
        LOADER: ("installed", ""),
        never: ("pending", ""),
    }
    assert corrupted_after_load(Model) == []


def test_already_imported_module_is_patched_at_once(fixture_pkg):
    from bl_fixture_loaders import loader

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for a target that resolves
        rt.patch(LOADER)
    assert rt.patched() == {LOADER: "sync"}
    assert corrupted_after_load(loader.Model) == []


def test_module_imported_again_is_patched_again(fixture_pkg):
    rt.patch(LOADER, policy="copy")
    from bl_fixture_loaders import loader as first

    del sys.modules[MODULE]
    second = importlib.import_module(MODULE)

    assert second is not first
    assert corrupted_after_load(second.Model) == []
    assert "load_weights" in first.Model.__dict__ and not hasattr(first.Model.load_weights, "__wrapped__")
    reloaded = importlib.reload(second)
    assert corrupted_after_load(reloaded.Model) == []
    assert states() == {LOADER: ("installed", "")}


def test_repatch_of_pending_target_changes_policy(fixture_pkg):
    rt.patch(LOADER)
    rt.patch(LOADER, policy="raise")
    from bl_fixture_loaders.loader import Model

    with pytest.raises(rt.BorrowedBufferError):
        corrupted_after_load(Model)
    assert rt.patched() == {LOADER: "raise"}


def test_unpatch_of_pending_target_stops_watching(fixture_pkg):
    rt.patch(LOADER)
    assert imports._finder in sys.meta_path
    assert rt.unpatch() == [LOADER]
    assert imports._finder not in sys.meta_path, "nothing watched: the finder leaves sys.meta_path"
    from bl_fixture_loaders.loader import Model

    assert rt.status() == [] and len(corrupted_after_load(Model)) == 8


def test_status_command(tmp_path):
    shim = tmp_path / "my_shim.py"
    shim.write_text(
        "from bufferlint.runtime import patch\n"
        f"patch({LOADER!r}, '{MODULE}:Model.nope', 'no_such_model_pkg.loader:load', policy='copy')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURES), *sys.path])}
    env.pop("BUFFERLINT_SHIM", None)
    command = [sys.executable, "-W", "ignore::bufferlint.runtime.PatchWarning", "-m", "bufferlint.runtime", "status", "--shim", str(shim)]
    lazy = subprocess.run(command, capture_output=True, text=True, env=env)
    assert lazy.returncode == 0, lazy.stderr
    assert lazy.stdout.splitlines() == [
        f"shims: {shim}; sanitizer: off",
        "3 target(s): 0 installed, 3 pending, 0 failed",
        f"  pending   {LOADER} (policy copy): module not imported yet",
        f"  pending   {MODULE}:Model.nope (policy copy): module not imported yet",
        "  pending   no_such_model_pkg.loader:load (policy copy): module not imported yet",
    ]
    checked = subprocess.run([*command, "--import"], capture_output=True, text=True, env=env)
    assert checked.returncode == 1
    assert checked.stdout.splitlines()[1:] == [
        "3 target(s): 1 installed, 1 pending, 1 failed",
        f"  installed {LOADER} (policy copy)",
        f"  failed    {MODULE}:Model.nope (policy copy): cannot patch '{MODULE}:Model.nope': "
        f"'{MODULE}:Model' has no attribute 'nope'",
        "  pending   no_such_model_pkg.loader:load (policy copy): cannot import: "
        "ModuleNotFoundError: No module named 'no_such_model_pkg'",
    ]


def test_target_sync_on_marker_refuses_fails_without_breaking_the_import(tmp_path, monkeypatch):
    (tmp_path / "bl_async_loader.py").write_text("async def load_weights(weights):\n    pass\n\nREADY = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    rt.patch("bl_async_loader:load_weights")
    try:
        with pytest.warns(rt.PatchWarning, match="does not support async functions"):
            module = importlib.import_module("bl_async_loader")
        assert module.READY and states()["bl_async_loader:load_weights"][0] == "failed"
    finally:
        sys.modules.pop("bl_async_loader", None)
