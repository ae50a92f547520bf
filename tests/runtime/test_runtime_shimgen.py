import importlib
import sys

import pytest

from bufferlint.shimgen import generate_shim, import_name


def test_generate_sorts_merges_nested_and_lists_findings():
    text = generate_shim({
        "pkg.b:load": ["BL001 pkg/b.py:3:5 borrowed buffer view reaches async sink `submit`"],
        "pkg.a:Model.load_weights": ["BL001 pkg/a.py:9:9 first", "BL001 pkg/a.py:12:9 second"],
        "pkg.b:outer.<locals>.inner": ["BL001 pkg/b.py:20:9 nested"],
    }, unexpressible=[("scripts.load-all:main", "'load-all' in scripts/load-all.py is not a Python identifier")])
    compile(text, "<shim>", "exec")
    targets = [line.strip() for line in text.splitlines() if line.strip().startswith("'")]
    assert targets == ["'pkg.a:Model.load_weights',", "'pkg.b:load',", "'pkg.b:outer',"]
    body = text.split("TARGETS = [")[1]
    # each target is preceded by the findings it answers
    assert body.index("# BL001 pkg/a.py:9:9 first") < body.index("# BL001 pkg/a.py:12:9 second") < body.index("'pkg.a:")
    assert body.index("'pkg.a:") < body.index("# BL001 pkg/b.py:3:5") < body.index("'pkg.b:load'")
    assert "pkg.b:outer.<locals>.inner is a nested function and cannot be patched by name" in body
    assert "# NOT PATCHED scripts.load-all:main: 'load-all'" in text
    assert "from bufferlint.runtime import patch" in text and "patch(*TARGETS, policy=POLICY)" in text
    assert text.startswith('"""bufferlint runtime shim')


def test_policy_validated_and_empty():
    with pytest.raises(ValueError):
        generate_shim({"a:b": []}, policy="nope")
    text = generate_shim({})
    assert "TARGETS = []" in text and "patch(" not in text.split("import patch")[1]
    assert "POLICY = 'copy'" in generate_shim({"a:b": []}, policy="copy")


def _touch(*paths):
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()


def test_import_name_crosses_namespace_folders_of_an_unpacked_wheel(tmp_path):
    """sglang/srt and sglang/srt/models have no __init__.py: pointed at models/ (no
    pyproject.toml, so the root is just that folder) the name still starts at `sglang`."""
    wheel = tmp_path / "wheel"
    loader = wheel / "sglang/srt/models/deepseek_v2.py"
    _touch(wheel / "sglang/__init__.py", loader, wheel / "sglang-0.5.16.dist-info/METADATA")
    models = wheel / "sglang/srt/models"
    assert import_name(loader, models, trusted_root=False) == "sglang.srt.models.deepseek_v2"
    # a trusted root (given, or with pyproject.toml) is where names count from
    assert import_name(loader, models, trusted_root=True) == "deepseek_v2"
    assert import_name(loader, wheel, trusted_root=True) == "sglang.srt.models.deepseek_v2"


def test_import_name_layouts(tmp_path):
    _touch(tmp_path / "src/pkg/__init__.py", tmp_path / "src/pkg/sub/__init__.py", tmp_path / "src/pkg/sub/m.py")
    assert import_name(tmp_path / "src/pkg/sub/m.py", tmp_path, True) == "pkg.sub.m"
    assert import_name(tmp_path / "src/pkg/sub/__init__.py", tmp_path, True) == "pkg.sub"
    _touch(tmp_path / "tools/run.py")  # no package at all: relative to the root
    assert import_name(tmp_path / "tools/run.py", tmp_path, True) == "tools.run"


@pytest.mark.parametrize("relative", ["my-scripts/load.py", "pkg/load-all.py", "pkg/class.py", "2024/load.py"])
def test_import_name_rejects_unimportable_files(tmp_path, relative):
    _touch(tmp_path / relative)
    with pytest.raises(ValueError, match="is not a Python identifier"):
        import_name(tmp_path / relative, tmp_path, True)


def test_generated_shim_makes_fixture_loader_safe(tmp_path, fixture_pkg, monkeypatch):
    torch = pytest.importorskip("torch")
    from bufferlint import runtime as rt
    from bufferlint.testing import RaceHarness

    # the `function` fields of findings on the fixture package
    functions = {
        "bl_fixture_loaders.loader:Model.load_weights": ["BL001 loader.py:1:1 a"],
        "bl_fixture_loaders.loader:make_loader.<locals>.inner": ["BL001 loader.py:2:1 b"],
    }
    (tmp_path / "bl_shim_generated.py").write_text(generate_shim(functions, module_hint="bl_shim_generated"))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("bl_shim_generated")  # what the operator does at start-up
    # lazy: nothing is imported or installed until the application imports the loader module
    assert "bl_fixture_loaders.loader" not in sys.modules
    assert [(s.target, s.state) for s in rt.status()] == [
        ("bl_fixture_loaders.loader:Model.load_weights", "pending"),
        ("bl_fixture_loaders.loader:make_loader", "pending"),
    ]
    from bl_fixture_loaders.loader import Model, load_model

    assert rt.patched() == {
        "bl_fixture_loaders.loader:Model.load_weights": "sync",
        "bl_fixture_loaders.loader:make_loader": "sync",
    }

    names = [f"w{i}" for i in range(8)]
    race = RaceHarness()
    model = load_model(names, 256, race.weights(8, (256,)), race.executor)
    race.assert_intact(model.params)
    race.close()
    assert isinstance(model, Model)
