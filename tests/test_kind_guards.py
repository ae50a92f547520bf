"""Guards and copies are kind-aware: a check of one kind's marker (or a guard, or a sanitizer,
bound to one kind) proves clean only values of that kind, also through a helper whose
parameter it checks (the caller's kinds decide). The corpus case is
``fixtures/analysis_config/two_kinds``; these are the domain's rules and the pack keys."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bufferlint.analysis.domain.values import Borrow, Cleared, ParamRef, Value, checked, clean, resolve
from bufferlint.analysis.frontend.vocabmatch import VocabIndex
from bufferlint.packs import PackError, builtin_vocabulary, vocabulary_from_dict

ROOT = Path(__file__).resolve().parents[1]
RING = Borrow(("f", 1, 0), kind="ring")
TENSOR = Borrow(("f", 2, 0), kind="runai-streamer")
UNKNOWN = Borrow(("f", 3, 0))


def facts(leaf, *tags) -> frozenset:
    return checked(Value(leaves=frozenset({leaf})), tags)


@pytest.mark.parametrize(
    ("leaf", "tag", "cleaned"),
    [
        (RING, "ring", True),
        (RING, "runai-streamer", False),  # another kind's marker protects nothing
        (RING, None, True),  # a marker no kind claims speaks for every kind
        (UNKNOWN, "ring", True),  # a value of no known kind: any check counts
        (TENSOR, "runai-streamer", True),
    ],
)
def test_a_check_cleans_values_of_its_kind(leaf: Borrow, tag, cleaned: bool) -> None:
    value = Value(leaves=frozenset({leaf, leaf.as_view()}))
    assert clean(value, facts(leaf, tag)).leaves == (frozenset() if cleaned else value.leaves)


def test_a_checked_parameter_defers_to_the_callers_kinds() -> None:
    param = ParamRef(0, ("iter",))
    (kept,) = clean(Value(leaves=frozenset({param})), facts(param, "ring")).leaves
    assert kept.path == ("iter", Cleared(frozenset({"ring"})))
    assert kept.identity == param.identity and kept.base == param.base  # still the same object
    caller = Value(elems=Value(leaves=frozenset({RING, TENSOR, ParamRef(2)})))
    seen = resolve(caller, kept.path).leaves
    assert RING not in seen and TENSOR in seen  # the caller's ring arrays are the clean ones
    (passed_on,) = [leaf for leaf in seen if isinstance(leaf, ParamRef)]  # the caller's own parameter
    assert passed_on.path == (Cleared(frozenset({"ring"})),)
    # checked for a second kind: one Cleared step with both
    both = kept.cleared_for(frozenset({"runai-streamer"}))
    assert both.path == ("iter", Cleared(frozenset({"ring", "runai-streamer"})))
    # a check for every kind drops the parameter, as before kinds
    assert not clean(Value(leaves=frozenset({param})), facts(param, None)).leaves


def test_marker_tags_follow_the_kinds_that_name_them() -> None:
    vocab = builtin_vocabulary()
    vocab.merge(vocabulary_from_dict({"markers": ["_legacy"], "kinds": [{"name": "ring", "markers": ["_ring"]}]}, "p.toml"))
    index = VocabIndex(vocab)
    assert index.marker_tags("_sglang_runai_streamer_tensor") == ("runai-streamer",)
    assert index.marker_tags("_ring") == ("ring",)
    assert index.marker_tags("_legacy") == (None,)
    assert index.marker_kind("_ring") == "ring" and index.marker_kind("_legacy") == ""


def test_sanitizers_take_a_kind() -> None:
    vocab = vocabulary_from_dict(
        {"kinds": [{"name": "ring", "copy": ".copy()"}], "sanitizers": [".clone", {"call": "ring.snapshot", "kind": "ring"}]}, "p.toml"
    )
    assert [(str(s.calls[0]), s.kind) for s in vocab.sanitizers] == [(".clone", ""), ("ring.snapshot", "ring")]
    assert vocab.origins[("sanitizers", "ring.snapshot")] == "p.toml"
    with pytest.raises(PackError, match=r"p.toml: sanitizers\[0\]: unknown key\(s\) 'kinds'"):
        vocabulary_from_dict({"sanitizers": [{"call": ".copy", "kinds": "x"}]}, "p.toml")
    full = builtin_vocabulary()
    full.merge(vocabulary_from_dict({"sanitizers": [{"call": "a.b", "kind": "nope"}]}, "p.toml"))
    with pytest.raises(PackError, match="sanitizer a.b names unknown kind 'nope'"):
        full.check_kinds()


def test_bl002_says_which_kind_a_guard_checks(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(ROOT / "tests/fixtures/analysis_config/two_kinds", root)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "bufferlint", "check", "--no-cache", "--format", "json", "app/policy.py"],
        cwd=root, capture_output=True, text=True, env=env,
    )
    assert done.returncode == 1, done.stderr
    (finding,) = json.loads(done.stdout)["findings"]
    assert "values marked `_ring_borrowed`" in finding["message"]
    notes = [step["note"] for step in finding["trace"]]
    assert notes == [
        "`may_defer_wrong_marker` checks only the markers of kind `runai-streamer`, another kind's",
        "`may_defer_wrong_marker` never checks `_ring_borrowed`",
    ]


def test_shipped_not_one_value_list() -> None:
    entries = builtin_vocabulary().not_one_value
    assert {".chunk", ".split", ".tensor_split", ".unbind", ".numpy", ".frombuffer", "memoryview", "numpy.*"} == set(entries)
    with pytest.raises(PackError, match=r"p.toml: not-one-value: 'numpy\.\*\.x' is not"):
        vocabulary_from_dict({"not-one-value": ["numpy.*.x"]}, "p.toml")


KEEP = '''\
import numpy as np
from runai_model_streamer import SafetensorsStreamer


def keep(files, cache):
    streamer = SafetensorsStreamer()
    streamer.stream_files(files)
    for name, tensor in streamer.get_tensors():
        cache[name] = tensor.window(0, 4)
        cache[name + ".np"] = np.asarray(tensor)
'''


@pytest.mark.parametrize(("not_one_value", "fixed_lines"), [([], [9]), ([".window"], [])])
def test_bl003_fix_reads_not_one_value_from_the_vocabulary(tmp_path: Path, not_one_value: list, fixed_lines: list) -> None:
    """`.window` is a view the project declares; listed as not one value, its store gets no
    `.clone()`. The shipped `numpy.*` entry keeps `np.asarray(tensor)` (through the `np`
    alias) from being cloned either way."""
    from bufferlint.api import CheckOptions, check

    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "p"\n[tool.bufferlint]\nviews = [".window"]\nnot-one-value = {json.dumps(not_one_value)}\n',
        encoding="utf-8",
    )
    (tmp_path / "keep.py").write_text(KEEP, encoding="utf-8")
    report = check(CheckOptions(paths=[tmp_path], project_root=tmp_path, fixes=True, cache=False))
    assert report.error is None
    stores = sorted(f.span.line for f in report.findings if f.rule == "BL003")
    assert stores == [9, 10]
    assert sorted(f.span.line for f in report.findings if f.rule == "BL003" and f.fix is not None) == fixed_lines


@pytest.mark.parametrize(
    ("call", "entries", "listed"),
    [
        ("np.asarray(w)", ["numpy.*"], True),  # through the import alias
        ("np.asarray(w)", ["numpy.asarray"], True),
        ("np.asarray(w)", [".frombuffer"], False),
        ("w.narrow(0, 0, 1).chunk(2)", [".chunk"], True),  # a method of a call
        ("memoryview(w)", ["memoryview"], True),
        ("w.memoryview()", ["memoryview"], False),  # a qualified name is not a method name
        ("frombuffer(w)", ["torch.frombuffer"], True),  # `from torch import frombuffer`
    ],
)
def test_not_one_value_matching(call: str, entries: list, listed: bool) -> None:
    import libcst as cst

    from bufferlint.fixes.base import SourceModule
    from bufferlint.fixes.bl003 import not_one_value
    from bufferlint.packs import Vocabulary

    src = SourceModule(f"import numpy as np\nfrom torch import frombuffer\nx = {call}\n")
    node = cst.parse_expression(call)
    assert not_one_value(src, node.func, Vocabulary(not_one_value=entries)) is listed
