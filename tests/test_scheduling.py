"""The project-wide worklist analyses callees before the callers waiting for them.

A loader that calls ``model.load_weights(weights)`` by method name reaches every model's
``load_weights``; each of those calls a chain of helpers found one level per analysis.
Re-analysing a caller each time a callee's summary changes costs a full analysis of the
caller per change (on the sglang tree the by-name dispatchers were analysed 12-14 times), so
callers whose callees changed wait (``Program.deferred``) until the work in hand is done,
callees first. The result must not depend on that order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bufferlint.analysis.whole import program as program_module
from bufferlint.analysis.whole.callee_order import CalleesFirst
from bufferlint.analysis.whole.program import Program, ProjectAnalysis, run_analysis
from bufferlint.packs import builtin_vocabulary

LOADER = '''
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

def load(model, files):
    weights = runai_safetensors_weights_iterator(files)
    model.load_weights(weights)
'''

MODEL = '''
import concurrent.futures

POOL = concurrent.futures.ThreadPoolExecutor(2)

def copy_{i}(param, w):
    return stage_{i}(param, w)

def stage_{i}(param, w):
    return keep_{i}(param, w)

def keep_{i}(param, w):
    {body}

class Model{i}:
    def load_weights(self, weights):
        for name, w in weights:
            copy_{i}(self, w)
'''


def write_project(root: Path, models: int) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "loader.py").write_text(LOADER)
    for i in range(models):
        body = "POOL.submit(print, w)" if i == 0 else "return param"
        (root / "pkg" / f"model{i}.py").write_text(MODEL.format(i=i, body=body))


def run(root: Path):
    files = sorted(root.rglob("*.py"))
    analysis = ProjectAnalysis(root, files, files, builtin_vocabulary())
    result = run_analysis(analysis)
    return analysis.program, result


def test_each_caller_is_analysed_once_more_after_its_callees_settle(tmp_path: Path) -> None:
    write_project(tmp_path, models=6)
    program, result = run(tmp_path)
    # Once to find its callees, once after they settled: re-queued at every change, a
    # caller at the top of a chain of helpers is analysed once per level found below it.
    assert max(program.analyses.values()) == 2, program.analyses
    assert [(f.rule, f.path.name, f.span.line) for f in result.findings] == [("BL001", "model0.py", 18)]


def test_callees_first_order_does_not_change_the_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(tmp_path, models=3)
    _, ordered = run(tmp_path)
    # The same project with deferred callers taken in plain queue order.
    monkeypatch.setattr(Program, "_callees_first", lambda self: next(q for q in self.deferred if q in self.queued_later))
    plain_program, plain = run(tmp_path)
    assert plain_program.analyses["pkg.loader.load"] > 1
    assert [(f.rule, f.span, f.trace) for f in ordered.findings] == [(f.rule, f.span, f.trace) for f in plain.findings]
    assert ordered.findings


ORDER = '''
import concurrent.futures
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

POOL = concurrent.futures.ThreadPoolExecutor(2)


class Report:
    pass


def load(files, extra):
    describe(files)
    for name, w in runai_safetensors_weights_iterator(files):
        POOL.submit(print, w)
    return load_extra(extra)


def describe(files):
    count = sum(1 for _ in runai_safetensors_weights_iterator(files))
    return Report()


def load_extra(files):
    return [w for _, w in runai_safetensors_weights_iterator(files)]
'''


def order_project(root: Path, text: str = ORDER) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "order.py").write_text(text)


def findings_of(result) -> list:
    return [(f.rule, f.span, f.trace) for f in result.findings]


def test_a_queued_callee_is_analysed_before_its_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    order_project(tmp_path)
    program, ordered = run(tmp_path)
    monkeypatch.setattr(CalleesFirst, "pick", lambda self, queue, queued, functions: queue.popleft())
    plain_program, plain = run(tmp_path)
    assert plain_program.analyses["pkg.order.load"] > program.analyses["pkg.order.load"], (program.analyses, plain_program.analyses)
    assert findings_of(ordered) == findings_of(plain) and ordered.findings


def test_a_discarded_value_changing_class_queues_no_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    order_project(tmp_path, ORDER.replace("return load_extra(extra)", "return None"))
    monkeypatch.setattr(CalleesFirst, "pick", lambda self, queue, queued, functions: queue.popleft())
    program, precise = run(tmp_path)
    # ``describe(files)``'s value is discarded: its summary's change (it returns a
    # ``Report``) queues ``load`` again only when every change queues every caller.
    monkeypatch.setattr(program_module, "changes_returned_object_only", lambda old, new: False)
    every_program, every = run(tmp_path)
    assert every_program.analyses["pkg.order.load"] > program.analyses["pkg.order.load"], (program.analyses, every_program.analyses)
    assert findings_of(precise) == findings_of(every) and precise.findings
