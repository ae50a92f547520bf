"""Borrow kinds: each producer's values carry their kind, so messages and fixes use that
kind's marker and copy method, never another configured kind's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bufferlint.packs import PackError, builtin_vocabulary, vocabulary_from_dict

ROOT = Path(__file__).resolve().parents[1]
FIXES = ROOT / "tests" / "fixtures" / "fixes"

# A user's ring buffer next to SGLang: its own marker (sorting before SGLang's) and a NumPy
# producer whose values are copied with `.copy()`.
PYPROJECT = """\
[project]
name = "ring"

[[tool.bufferlint.kinds]]
name = "ring"
markers = ["_aaa_ring_borrowed"]
copy = ".copy()"
remedy = "or size the ring to hold every kept slot"

[[tool.bufferlint.sources]]
call = "ringlib.slots"
produces = "iter[borrowed]"
kind = "ring"
"""

RING = '''\
"""Keeps the slots of a ring buffer (`ringlib.slots` yields NumPy views of slots it reuses)."""

import numpy as np
from ringlib import slots


def keep_all(ring: np.ndarray):
    kept = []
    for slot in slots(ring):
        kept.append(slot)
    return kept
'''


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "bufferlint", *args], cwd=cwd, capture_output=True, text=True, env=env)


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(FIXES / "support", root)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "ringbuf.py").write_text(RING, encoding="utf-8")
    guard = FIXES / "bl002_string.py"  # SGLang's guard, broken as upstream had it
    (root / "sglang/srt/model_loader/utils.py").write_bytes(guard.read_bytes())
    return root


def findings(root: Path, *paths: str) -> list[dict]:
    done = run("check", "--format", "json", *paths, cwd=root)
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)["findings"]


def test_bl002_names_the_guards_own_marker_with_two_kinds(tmp_path: Path) -> None:
    root = project(tmp_path)
    utils = root / "sglang/srt/model_loader/utils.py"
    guard = [f for f in findings(root, str(utils)) if f["rule"] == "BL002"]
    assert len(guard) == 1
    assert "`_sglang_runai_streamer_tensor`" in guard[0]["message"]
    assert "_aaa_ring_borrowed" not in guard[0]["message"]
    inserted = "".join(edit["replacement"] for edit in guard[0]["fix"]["edits"])
    assert "_sglang_runai_streamer_tensor" in inserted or "RUNAI_STREAMER_TENSOR_ATTR" in inserted
    assert "_aaa_ring_borrowed" not in inserted


def test_numpy_producer_is_copied_with_its_own_method(tmp_path: Path) -> None:
    root = project(tmp_path)
    kept = [f for f in findings(root, "ringbuf.py") if f["rule"] == "BL003"]
    assert len(kept) == 1
    assert "`value.copy()`" in kept[0]["message"] and "owned=True" not in kept[0]["message"]
    assert "size the ring" in kept[0]["message"]
    done = run("check", "--fix", "--unsafe-fixes", "ringbuf.py", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "        kept.append(slot.copy())\n" in (root / "ringbuf.py").read_text()


def test_shipped_kinds() -> None:
    kinds = builtin_vocabulary().kinds
    assert kinds["runai-streamer"].markers == ("_sglang_runai_streamer_tensor",)
    assert kinds["runai-streamer"].copy_of("w") == "w.clone()"
    assert kinds["numpy"].copy_of("a") == "a.copy()"
    assert kinds["memoryview"].copy_of("m") == "bytes(m)"
    sources = builtin_vocabulary().sources
    assert {s.kind for s in sources if not s.until} == {"runai-streamer", "instanttensor"}
    assert kinds["shared-memory"].copy_of("v") == "bytes(v)"
    assert {s.kind for s in sources if s.until} == {"torch"}  # device-to-host copies (BL005)


@pytest.mark.parametrize(
    ("table", "error"),
    [
        ({"kinds": [{"name": "x", "copy": "copy()"}]}, "'copy' must be a method"),
        ({"kinds": [{"name": "x", "colour": 1}]}, "unknown key(s) 'colour'"),
        ({"kinds": [{"name": "x"}, {"name": "x"}]}, "defined twice"),
    ],
)
def test_bad_kinds_name_the_problem(table: dict, error: str) -> None:
    with pytest.raises(PackError) as raised:
        vocabulary_from_dict(table, "p.toml")
    assert error in str(raised.value) and str(raised.value).startswith("p.toml: kinds[")


def test_unknown_kind_is_reported() -> None:
    vocab = builtin_vocabulary()
    vocab.merge(vocabulary_from_dict({"sources": [{"call": "a.b", "kind": "nope"}]}, "p.toml"))
    with pytest.raises(PackError, match="unknown kind 'nope'"):
        vocab.check_kinds()


def test_show_settings_lists_origins_and_warns_about_unmatched_entries(tmp_path: Path) -> None:
    root = project(tmp_path)
    with (root / "pyproject.toml").open("a", encoding="utf-8") as config:
        config.write('\n[[tool.bufferlint.guards]]\ncall = "ringlib.is_fre"\nkind = "ring"\n')
    done = run("check", "--show-settings", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "  ringlib.slots  kind=ring  (" in done.stdout and "pyproject.toml: [tool.bufferlint])" in done.stdout
    assert "ring: _aaa_ring_borrowed; copy value.copy()" in done.stdout
    assert "sglang.srt.model_loader.utils.should_async_load  kind=runai-streamer  (shipped runai-streamer.toml)" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    # the typo and the marker no file uses; shipped entries are listed, not warned about
    assert len(warnings) == 2, done.stderr
    assert any("'ringlib.is_fre' matches nothing" in w for w in warnings)
    assert any("'_aaa_ring_borrowed' matches nothing" in w for w in warnings)


def test_signatures_name_parameters() -> None:
    vocab = builtin_vocabulary()
    assert vocab.signatures["torch.nn.Parameter"][0] == "data"
    assert vocab.signatures["numpy.frombuffer"][0] == "buffer"
    with pytest.raises(PackError, match="signatures.'f' must be a non-empty list of parameter names"):
        vocabulary_from_dict({"signatures": {"f": ["not a name"]}}, "p.toml")


# A project's own producers, declared with no kind: the kind comes from what their
# annotations say they return, else the words name no library and no copy is offered.
UNKINDED = {
    "pyproject.toml": """\
[project]
name = "frames"

[[tool.bufferlint.sources]]
call = ["frames.arrays", "frames.tensors", "frames.blobs"]
produces = "iter[borrowed]"
""",
    "frames.py": '''\
from typing import Iterator

import numpy as np
import torch


def arrays(path: str) -> Iterator[np.ndarray]:
    buf = np.empty(1024, dtype=np.uint8)
    while True:
        yield buf


def tensors(path: str) -> "Iterator[torch.Tensor]":
    buf = torch.empty(1024)
    while True:
        yield buf


def blobs(path):
    buf = bytearray(1024)
    while True:
        yield buf
''',
    "app.py": '''\
from frames import arrays, blobs, tensors


def keep(path):
    kept = []
    for frame in arrays(path):
        kept.append(frame)
    for frame in tensors(path):
        kept.append(frame)
    for frame in blobs(path):
        kept.append(frame)
    return kept
''',
}


def test_a_source_with_no_kind_takes_it_from_its_annotations_or_names_no_library(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    for name, text in UNKINDED.items():
        (root / name).write_text(text, encoding="utf-8")
    by_line = {f["line"]: f for f in findings(root, "app.py")}
    assert sorted(by_line) == [7, 9, 11]
    arrays, tensors, blobs = by_line[7], by_line[9], by_line[11]
    assert "`value.copy()`" in arrays["message"] and ".clone()" not in arrays["message"]
    assert "`value.clone()`" in tensors["message"]
    for finding in (arrays, tensors, blobs):
        assert "owned=True" not in finding["message"] and "runai" not in finding["message"].lower()
    assert "`value." not in blobs["message"] and "library's copy method" in blobs["message"]
    done = run("check", "--fix", "--unsafe-fixes", "app.py", cwd=root)
    fixed = (root / "app.py").read_text()
    assert "kept.append(frame.copy())" in fixed and "kept.append(frame.clone())" in fixed
    assert done.returncode == 1  # the blob's copy is not known: no fix, still reported
