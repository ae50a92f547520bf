"""A parsed file's interface (``analysis.interface``): what the analysis reads of it outside
the functions it interpreted. Two versions with the same interface give the same analysis
with those functions moved; anything the analysis reads must change the digest."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bufferlint.analysis.frontend.index import FACTS, NOT_FACTS
from bufferlint.analysis.incremental.interface import LineShift, file_interface

BASE = '''\
import torch
from pkg.stream import stream as it2

LIMIT = 4


class Model:
    size: int = 3

    def __init__(self, config):
        self.pool = Pool(config)
        self.cache = {}

    def forward(self, x):
        return x * 2

    def load_weights(self, weights):
        for name, w in weights:
            self.cache[name] = w
'''

ANALYSED = {"pkg.model.Model.load_weights"}
WORDS = {"stream", "synchronize", "_sglang_runai_streamer_tensor"}


def interface(text: str, root: Path):
    return file_interface(text, root / "pkg" / "model.py", root, ANALYSED, WORDS, [("non_blocking", "to")])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    return tmp_path


@pytest.mark.parametrize("old, new", [
    ("        return x * 2\n", "        y = x * 2\n        return y\n"),  # a body never interpreted
    ("import torch\n", "import torch\n# a comment\n\n"),  # lines above everything
    ("    def forward(self, x):\n", "    def forward(self, x):  # documented\n"),
])
def test_edits_the_analysis_does_not_read_keep_the_interface(root: Path, old: str, new: str) -> None:
    before, after = interface(BASE, root), interface(BASE.replace(old, new, 1), root)
    assert before is not None and after is not None
    assert before.digest == after.digest


@pytest.mark.parametrize("old, new", [
    ("            self.cache[name] = w\n", "            self.cache[name] = w.clone()\n"),  # the interpreted body
    ("        self.pool = Pool(config)\n", "        self.pool = OtherPool(config)\n"),  # a field's class
    ("        return x * 2\n", "        return self.cache\n"),  # a new reader of self.cache
    ("        return x * 2\n", "        return it2(x)\n"),  # mentions a source through its alias
    ("        return x * 2\n", "        torch.cuda.synchronize()\n        return x\n"),  # a synchroniser
    ("        return x * 2\n", "        return x.to('cpu', non_blocking=True)\n"),  # a word group
    ("    def forward(self, x):\n", "    def forward(self, x, y=None):\n"),  # a signature
    ("    def forward(self, x):\n", "    @staticmethod\n    def forward(x):\n"),  # a decorator
    ("    size: int = 3\n", "    size: int = 4\n"),  # a class body
    ("LIMIT = 4\n", "LIMIT = '_sglang_runai_streamer_tensor'\n"),  # a constant
    ("        return x * 2\n", "        def inner():\n            return x\n        return inner()\n"),  # a new function
])
def test_edits_the_analysis_reads_change_the_interface(root: Path, old: str, new: str) -> None:
    assert old in BASE
    assert interface(BASE, root).digest != interface(BASE.replace(old, new, 1), root).digest


def test_a_file_that_does_not_parse_has_no_interface(root: Path) -> None:
    assert interface(BASE + "def broken(:\n", root) is None


def test_lines_move_with_the_innermost_interpreted_function(root: Path) -> None:
    before = interface(BASE, root)
    after = interface("# one\n# two\n" + BASE.replace("        return x * 2\n", "        return x\n        # three\n"), root)
    shift = LineShift(root, before.ranges, after.ranges)
    first, last = before.ranges["pkg.model.Model.load_weights"]
    assert shift.line(first) == first + 3 and shift.line(last) == last + 3
    assert shift.line(1) is None  # not inside an interpreted function: cannot be placed


@pytest.mark.parametrize("entry", list(FACTS))
def test_every_field_of_an_index_entry_is_a_declared_fact_or_says_why_not(entry: type) -> None:
    """A field added to the index's entries must be declared a fact (then the interface
    compares it) or say why it is none (``index.NOT_FACTS``)."""
    names = {f.name for f in dataclasses.fields(entry)}
    facts, others = set(FACTS[entry]), set(NOT_FACTS[entry])
    assert not facts & others
    assert names <= facts | others, f"{entry.__name__}: undeclared fields {sorted(names - facts - others)}"
    assert others <= names
    assert all(hasattr(entry, name) or name in names for name in facts)


def test_the_interface_reads_the_declared_facts(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The interface takes the index's facts from their declaration, not from a list of its
    own: a fact declared for each kind of entry is read for each."""
    read: list[str] = []
    for entry in list(FACTS):
        probe = property(lambda self, name=entry.__name__: read.append(name) or name)
        monkeypatch.setattr(entry, "probe", probe, raising=False)
        monkeypatch.setitem(FACTS, entry, FACTS[entry] + ("probe",))
    interface(BASE, root)
    assert set(read) == {"ModuleInfo", "FunctionInfo", "ClassInfo"}
