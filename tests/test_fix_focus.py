"""Fixes for findings in a large file are planned from the code around the findings
(``focused_text``), so their cost follows what is reported, and they are the fixes the
whole file would give."""

from __future__ import annotations

import ast
import dataclasses
import sys
from pathlib import Path

import libcst as cst

from bufferlint.analysis import analyze_project
from bufferlint.fixes import base as fix_base
from bufferlint.fixes.planners import plan_fix
from bufferlint.fixes.runner import attach_fixes
from bufferlint.packs import builtin_vocabulary
from bufferlint.textlines import line_ending

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from large_file_bench import LOADER, PLAIN  # noqa: E402

GUARD = '''
GUARD_MARKER = "_sglang_runai_streamer_tensor"


@decorated
class Holder:
    """A class between the loaders."""

    def method(self):
        return """a string with
def fake(): pass
inside"""


def should_async_load(weight):
    return weight.device.type == "cpu"

'''


def module(functions: int) -> str:
    parts = ["import concurrent.futures\n\n\ndef decorated(c):\n    return c\n"]
    for i in range(functions):
        parts.append(LOADER.format(i=i) if i % 40 == 20 else PLAIN.format(i=i))
        if i == 50:
            parts.append(GUARD)
    return "".join(parts)


def test_focused_text_keeps_positions_and_names() -> None:
    text = module(120).replace("\n", "\r\n", 3)  # mixed line endings are kept too
    wanted = [i + 1 for i, line in enumerate(text.splitlines()) if "executor.submit" in line]
    focused, stubs = fix_base.focused_text(text, wanted)
    old, new = fix_base.split_lines(text), fix_base.split_lines(focused)
    assert len(old) == len(new)
    assert [line_ending(a) for a in old] == [line_ending(b) for b in new]
    for line in wanted:
        start = max(line - 4, 0)
        assert old[start:line + 1] == new[start:line + 1]  # the loaders are kept as they are
    assert {"step_0", "Holder", "should_async_load", "decorated"} <= set(stubs)
    kept = {node.name for node in ast.parse(focused).body if isinstance(node, ast.FunctionDef)}
    assert {"load_20", "load_60", "load_100"} <= kept
    assert len(focused.splitlines()[0]) < 100 and ast.parse(focused)  # still Python


def test_fixes_are_those_of_the_whole_file(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text(module(200))
    files = [tmp_path / "big.py"]
    vocab = builtin_vocabulary()
    findings = [f for f in analyze_project(tmp_path, files, files, vocab).findings if f.rule == "BL001"]
    assert len(findings) == 5
    project = fix_base.Project(tmp_path, vocab, files)
    focused = attach_fixes(findings, project)
    text = (tmp_path / "big.py").read_text()
    context = fix_base.FixContext(project, files[0])  # no focus: the whole file, as before
    whole = [dataclasses.replace(f, fix=plan_fix(f, text, context)) for f in findings]
    assert [f.fix for f in focused] == [f.fix for f in whole]
    assert all(f.fix is not None for f in focused)


def test_names_bound_in_reduced_parts_are_still_bound() -> None:
    text = module(120)
    line = next(i + 1 for i, text_line in enumerate(text.splitlines()) if "executor.submit" in text_line)
    whole, focused = fix_base.SourceModule(text, "big"), fix_base.SourceModule(text, "big", focus=[line])
    assert set(focused.top_level_bindings()) == set(whole.top_level_bindings())
    assert focused.local_name_for("big.should_async_load") == whole.local_name_for("big.should_async_load") == "should_async_load"
    assert focused.import_edit("import x") == whole.import_edit("import x")


def _fixture_modules() -> list[tuple[Path, cst.Module]]:
    fixtures = Path(__file__).parent / "fixtures"
    sources = sorted(fixtures.rglob("*.py")) + [Path(fix_base.__file__)]
    return [(path, cst.parse_module(path.read_text(encoding="utf-8"))) for path in sources]


def test_positions_and_parents_are_those_of_libcst_providers() -> None:
    """The fixers' positions and parents are computed without LibCST's metadata resolver
    (for speed); they must be exactly what its providers give, node for node."""
    from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

    modules = _fixture_modules()
    assert len(modules) > 20
    for path, tree in modules:
        wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
        expected_positions = wrapper.resolve(PositionProvider)
        positions = fix_base.node_positions(tree)
        assert list(positions.items()) == list(expected_positions.items()), path  # same order: walk() relies on it
        expected_parents = wrapper.resolve(ParentNodeProvider)
        parents = fix_base.parent_map(tree)
        assert parents.keys() == expected_parents.keys(), path
        assert all(parents[node] is expected_parents[node] for node in parents), path


def test_descendants_are_the_subtree() -> None:
    for path, tree in _fixture_modules()[:10]:
        source = fix_base.SourceModule(tree.code)
        everything = set(source.positions)
        assert set(source.descendants(source.tree)) == everything, path
        for function in source.walk(cst.FunctionDef):
            below = set(source.descendants(function))
            assert below == {n for n in everything if n is function or function in source.ancestors(n)}, path


MODEL = '''import concurrent.futures
import functools


def stream(tensors):
    for name, tensor in tensors.items():
        setattr(tensor, "_sglang_runai_streamer_tensor", True)
        yield name, tensor


class Model:
    """A model class: the findings are in two of its many methods."""

    scale = 2

    def __init__(self):
        self.kept = {}

{methods}
    @functools.cache
    def load_weights(self, tensors, fn):
        with concurrent.futures.ThreadPoolExecutor() as executor:
            for name, w in stream(tensors):
                executor.submit(fn, w)

    class Inner:
        def keep(self, tensors):
            for name, w in stream(tensors):
                self.last = w

        def other(self):
            return 1

    def remember(self, tensors):
        for name, w in stream(tensors):
            self.kept[name] = w
{methods}'''

METHOD = '''    @property
    def layer_{i}(self):
        """Generated method {i}."""
        return [v * self.scale for v in range({i})]

'''


def test_methods_of_a_class_are_reduced_and_the_fixes_are_those_of_the_whole_file(tmp_path: Path) -> None:
    text = MODEL.replace("{methods}", "".join(METHOD.format(i=i) for i in range(40)))
    (tmp_path / "model.py").write_text(text)
    files = [tmp_path / "model.py"]
    vocab = builtin_vocabulary()
    findings = analyze_project(tmp_path, files, files, vocab).findings
    assert {f.rule for f in findings} == {"BL001", "BL003"} and len(findings) == 3

    focus = [line for f in findings for line in range(f.span.line, f.span.end_line + 1)]
    focused, stubs = fix_base.focused_text(text, focus)
    assert len(fix_base.split_lines(focused)) == len(fix_base.split_lines(text))
    members = [n.name for n in ast.walk(ast.parse(focused)) if isinstance(n, ast.FunctionDef)]
    # each run of siblings is one stub named after its first member; the bodies are gone
    assert sorted(members) == ["__init__", "keep", "layer_0", "load_weights", "other", "remember", "stream"]
    assert "Generated method" not in focused and "return 1" not in focused and "self.kept = {}" not in focused
    assert "@functools.cache" in focused and "Model" not in stubs and "stream" in stubs
    for finding in findings:  # the lines around each finding are the file's own
        for line in range(finding.span.line - 3, finding.span.end_line + 1):
            assert fix_base.split_lines(focused)[line - 1] == fix_base.split_lines(text)[line - 1]

    project = fix_base.Project(tmp_path, vocab, files)
    planned = attach_fixes(findings, project)
    context = fix_base.FixContext(project, files[0])  # no focus: the whole file
    whole = [dataclasses.replace(f, fix=plan_fix(f, text, context)) for f in findings]
    assert [f.fix for f in planned] == [f.fix for f in whole]
    assert all(f.fix is not None for f in planned)


def test_files_planned_in_parallel_get_their_own_fixes(tmp_path: Path, monkeypatch) -> None:
    """With enough files the planning runs in two worker processes, largest file first; each
    finding must get the fix planned for it, as when every file is planned here in turn."""
    from bufferlint.fixes import runner

    files = []
    for i in range(runner.PARALLEL_FILES + 3):
        path = tmp_path / f"loader_{i}.py"  # sizes differ, so largest-first is not path order
        path.write_text(module(21 + (i * 7) % 60))  # one loader (function 20) or two
        files.append(path)
    vocab = builtin_vocabulary()
    findings = analyze_project(tmp_path, files, files, vocab).findings
    assert len({f.path for f in findings}) >= runner.PARALLEL_FILES
    project = fix_base.Project(tmp_path, vocab, files)
    parallel = attach_fixes(findings, project)
    monkeypatch.setattr(runner, "PARALLEL_FILES", 10**9)
    here = attach_fixes(findings, fix_base.Project(tmp_path, vocab, files))
    assert [f.fix for f in parallel] == [f.fix for f in here]
    assert all(f.fix is not None for f in parallel if f.rule == "BL001")
