"""The import graph read from text (``analysis/frontend/imports.py``): what a module's lines
import, which modules a registry loads by name, and why each module is reachable."""

from __future__ import annotations

from pathlib import Path

from bufferlint.analysis import analyze_project
from bufferlint.analysis.frontend.imports import IMPORTED, ImportGraph, scan_imports
from bufferlint.findings import BY_NAME
from bufferlint.packs import builtin_vocabulary


def test_import_statements_of_every_shape_are_read_without_parsing() -> None:
    text = b"""\
import os, app.util as util
from . import sibling
from ..core.base import (
    Base,  # the base
    Mixin,
)
from .models import llama; x = 1

def later():
    from app.late import Late  # a function's own import runs when it does
    return "import nothing here"
"""
    found = scan_imports(text, "app.pkg.loader", False)
    assert found.imported == (
        "app.core.base", "app.core.base.Base", "app.core.base.Mixin", "app.late", "app.late.Late",
        "app.pkg", "app.pkg.models", "app.pkg.models.llama", "app.pkg.sibling", "app.util", "os",
    )
    assert found.by_name == ()


def test_a_package_s_own_relative_import_is_relative_to_itself() -> None:
    assert scan_imports(b"from .impl import run\n", "app.pkg", True).imported == ("app.pkg.impl", "app.pkg.impl.run")


def test_a_registry_names_the_packages_it_loads_by_name() -> None:
    text = b'import importlib\n\ndef load(name):\n    return importlib.import_module(f"app.models.{name}")\n'
    assert scan_imports(text, "app.registry", False).by_name == ("app.models",)
    # a module __getattr__ (PEP 562) loads only the attributes its users ask for
    lazy = text + b"\n\ndef __getattr__(name):\n    return load(name)\n"
    assert scan_imports(lazy, "app.registry", False).by_name == ()
    # a dotted literal in a module that loads nothing by name is just text
    assert scan_imports(b'NAME = "app.models"\n', "app.names", False).by_name == ()


def _graph(modules: dict[str, bytes], packages: tuple[str, ...] = ()) -> ImportGraph:
    return ImportGraph({name: scan_imports(text, name, name in packages) for name, text in modules.items()})


def test_reachable_follows_imports_parents_and_registries_preferring_plain_imports() -> None:
    graph = _graph({
        "app": b"",
        "app.loader": b"from app.registry import load\nfrom app.models.common import Base\n",
        "app.registry": b'import importlib\nPACKAGE = "app.models"\nimportlib.import_module(PACKAGE)\n',
        "app.models.common": b"",
        "app.models.llama": b"from app.models.common import Base\n",
        "app.other": b"",
    }, packages=("app",))
    reach = graph.reachable("app.loader")
    assert reach["app"] == IMPORTED  # a module's parent packages run before it
    assert reach["app.models.common"] == IMPORTED  # imported, though the registry loads it too
    assert reach["app.models.llama"] == ("app.registry", "app.models")
    assert "app.other" not in reach
    assert graph.reachable("app.other") == {"app.other": IMPORTED, "app": IMPORTED}


def test_a_question_about_one_module_answers_what_the_whole_search_does() -> None:
    """``reason`` stops its search at the module asked about, and answers "not reached"
    from the reachable sets without searching: the same answers as the whole search, asked
    in any order (cycles, a registry, parents that are and are not modules, modules the
    graph does not hold), plain imports answered from their own reachable sets."""
    modules = {
        "app": b"",
        "app.a": b"from app.b import x\n",
        "app.b": b"from app.a import y\nfrom app.c import z\n",  # a cycle with app.a
        "app.c": b"",
        "app.registry": b'import importlib\nimportlib.import_module(f"app.models.{n}")\n',
        "app.models.one": b"from app.c import z\n",
        "app.d": b"import app.registry\n",
        "lone.e": b"",  # its parent package is no module
    }
    whole = _graph(modules, packages=("app",))
    for order in (sorted(modules), sorted(modules, reverse=True)):
        asking = _graph(modules, packages=("app",))
        for module in order + ["app.ghost"]:
            for target in order + ["app.ghost"]:
                assert asking.reason(module, target) == whole.reachable(module).get(target), (module, target)
    assert whole.reachable("app.d")["app.models.one"] == ("app.registry", "app.models")


def test_the_digest_changes_with_the_imports_only() -> None:
    before = scan_imports(b"import app.a\n\ndef f():\n    return 1\n", "app.m", False).digest()
    assert scan_imports(b"import app.a\n\ndef f():\n    return 2\n", "app.m", False).digest() == before
    assert scan_imports(b"import app.a\nimport app.b\n", "app.m", False).digest() != before


def test_each_step_by_name_says_why_the_method_was_reached() -> None:
    """The fixture ``dispatch_reach``: one call per way a class is reached, each step marked
    as a call resolved by name (``BY_NAME``), with its reason in words."""
    root = Path(__file__).parent / "fixtures" / "analysis" / "dispatch_reach"
    files = sorted(root.rglob("*.py"))
    result = analyze_project(root, files, files, builtin_vocabulary())
    steps = {f.path.name: [s.note for s in f.trace if s.fact == (BY_NAME,)] for f in result.findings}
    assert steps == {
        "models.py": ["passed to `model.load_weights(...)`: `DirectModel.load_weights` by name, "
                      "its module imported from here"],
        "llama.py": ["passed to `model.load_state(...)`: `LlamaModel.load_state` by name, "
                     "`zoo_app.zoo.registry` imports every module of `zoo_app.zoo`"],
        "sink.py": ["passed to `sink.absorb(...)`: `PluginSink.absorb` by name, like every project "
                    "method of that name (none is in a module imported from here)"],
    }
