import importlib

import pytest

from bufferlint.shimgen import generate_shim


def test_generate_dedupes_sorts_and_handles_nested():
    text = generate_shim([
        "pkg.b:load",
        "pkg.a:Model.load_weights",
        "pkg.a:Model.load_weights",
        "pkg.b:outer.<locals>.inner",
        "not a target",
    ])
    compile(text, "<shim>", "exec")
    targets = [line.strip() for line in text.splitlines() if line.strip().startswith("'")]
    assert targets == ["'pkg.a:Model.load_weights',", "'pkg.b:load',", "'pkg.b:outer',"]
    assert "pkg.b:outer.<locals>.inner is a nested function and cannot be patched by name" in text
    assert "skipped 'not a target'" in text
    assert "from bufferlint.runtime import patch" in text and "patch(*TARGETS, policy=POLICY)" in text
    assert text.startswith('"""bufferlint runtime shim')


def test_policy_validated_and_empty():
    with pytest.raises(ValueError):
        generate_shim(["a:b"], policy="nope")
    text = generate_shim([])
    assert "TARGETS = []" in text and "patch(" not in text.split("import patch")[1]
    assert "POLICY = 'copy'" in generate_shim(["a:b"], policy="copy")


def test_generated_shim_makes_fixture_loader_safe(tmp_path, fixture_pkg, monkeypatch):
    torch = pytest.importorskip("torch")
    from bufferlint import runtime as rt
    from bufferlint.testing import RaceHarness

    # the `function` fields of findings on the fixture package
    functions = [
        "bl_fixture_loaders.loader:Model.load_weights",
        "bl_fixture_loaders.loader:make_loader.<locals>.inner",
        "bl_fixture_loaders.loader:Model.load_weights",
    ]
    (tmp_path / "bl_shim_generated.py").write_text(generate_shim(functions, module_hint="bl_shim_generated"))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("bl_shim_generated")  # what the operator does at start-up
    assert rt.patched() == {
        "bl_fixture_loaders.loader:Model.load_weights": "sync",
        "bl_fixture_loaders.loader:make_loader": "sync",
    }
    from bl_fixture_loaders.loader import Model, load_model

    names = [f"w{i}" for i in range(8)]
    race = RaceHarness()
    model = load_model(names, 256, race.weights(8, (256,)), race.executor)
    race.assert_intact(model.params)
    race.close()
    assert isinstance(model, Model)
