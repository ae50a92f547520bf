"""The constructors the language writes for record classes (``frontend.records``), checked
against what Python itself builds: each class below is also executed, and its generated
``__init__`` signature must give the same fields, order and positional count."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from bufferlint.analysis import analyze_project
from bufferlint.analysis.frontend.index import ModuleInfo, ProjectIndex
from bufferlint.packs import builtin_vocabulary

SOURCE = '''\
import collections
import dataclasses
import typing
from dataclasses import KW_ONLY, dataclass, field
from typing import ClassVar, NamedTuple


class Item(NamedTuple):
    name: str
    tensor: object
    scale: float = 1.0


class Named(Item):
    def describe(self):
        return self.name


@dataclass
class Entry:
    name: str
    tensor: object
    COUNT: ClassVar[int] = 0
    cached: object = field(init=False, default=None)


@dataclasses.dataclass(eq=False)
class Shard(Entry):
    rank: int = 0
    tensor: object = None  # an override keeps its place


@dataclass
class Tagged:
    tensor: object
    _: KW_ONLY
    name: str = ""
    rank: int = 0


@dataclass(kw_only=True)
class AllByKeyword:
    name: str
    tensor: object


class Plain(Entry):
    extra: int = 0


@dataclass
class OwnInit:
    tensor: object

    def __init__(self, tensor):
        self.tensor = tensor


@dataclass(init=False)
class NoInit:
    tensor: object


class NotARecord:
    tensor: object


class DerivedPair(collections.namedtuple("Pair", "name tensor")):
    def describe(self):
        return self.name


class DerivedSlot(typing.NamedTuple("Slot", [("tensor", object), ("rank", int)])):
    pass
'''


@pytest.fixture(scope="module")
def index() -> ProjectIndex:
    found = ProjectIndex()
    found.add_module(ModuleInfo("pkg", Path("/p/pkg.py"), ast.parse(SOURCE), SOURCE, False))
    return found


@pytest.fixture(scope="module")
def classes() -> dict:
    namespace: dict = {}
    exec(compile(SOURCE, "pkg.py", "exec", dont_inherit=True), namespace)
    return namespace


def python_shape(cls: type) -> tuple[tuple[str, ...], int]:
    """The fields of the ``__init__`` Python generated, in order, and how many are positional."""
    params = list(inspect.signature(cls).parameters.values())
    positional = [p for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    return tuple(p.name for p in params), len(positional)


@pytest.mark.parametrize("name", ["Item", "Named", "Entry", "Shard", "Tagged", "AllByKeyword", "Plain", "DerivedPair",
                                  "DerivedSlot"])
def test_a_record_constructor_is_the_one_python_writes(index: ProjectIndex, classes: dict, name: str) -> None:
    assert index.record_shape(f"pkg.{name}") == python_shape(classes[name])


@pytest.mark.parametrize("name", ["OwnInit", "NoInit", "NotARecord"])
def test_a_class_whose_init_the_source_writes_is_no_record(index: ProjectIndex, name: str) -> None:
    assert index.record_shape(f"pkg.{name}") is None


RECURSIVE = '''\
from dataclasses import dataclass

MARKER = "_sglang_runai_streamer_tensor"


def stream(tensors):
    for name, tensor in tensors:
        setattr(tensor, MARKER, True)
        yield name, tensor


@dataclass
class Meta:
    inner: object
    weight: object


def build(w, depth):
    if depth:
        return Meta(build(w, depth - 1), w)
    return Meta(None, w)


def load(executor, tensors):
    for name, w in stream(tensors):
        executor.submit(print, build(w, 3).inner)
'''


def test_a_record_built_from_records_converges(tmp_path: Path) -> None:
    """A function returning a record that holds its own result nests no deeper than a
    container may: the summary settles, with no analysis limit hit (vLLM's metadata builders
    hit it before each part was capped), and the view inside is still followed."""
    (tmp_path / "meta.py").write_text(RECURSIVE)
    files = [tmp_path / "meta.py"]
    result = analyze_project(tmp_path, files, files, builtin_vocabulary())
    assert result.notices == []
    assert [(f.rule, f.span.line) for f in result.findings] == [("BL001", 26)]
